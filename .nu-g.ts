import { GoogleGenAI } from "@google/genai";
const g = new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: process.argv[2] } });
const orig = globalThis.fetch; globalThis.fetch = (async (u: any, i: any) => { console.log("FETCH", String(u)); return orig(u, i); }) as any;
const p = await g.models.list(); console.log(p.page, p.pageLength);
