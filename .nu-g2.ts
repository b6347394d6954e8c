import { GoogleGenAI } from "@google/genai";
const g = new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: process.argv[2] } });
const orig = globalThis.fetch; globalThis.fetch = (async (u: any, i: any) => { console.log("FETCH", String(u), JSON.stringify(Object.fromEntries(new Headers(i?.headers).entries()))); return orig(u, i); }) as any;
await g.models.generateContent({ model: "fast", contents: "hi" });
try { const m = await g.models.get({ model: "demo" }); console.log("get:", JSON.stringify(m).slice(0, 300)); } catch (e) { console.log("get err", e.message); }
