import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
const U = process.argv[2];
const o = new OpenAI({ baseURL: `${U}/v1`, apiKey: "placeholder" });
console.log("openai chat:", (await o.chat.completions.create({ model: "fast", messages: [{ role: "user", content: "hi" }] })).choices[0].message.content);
const s = await o.chat.completions.create({ model: "demo", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
let t = ""; let u; for await (const c of s) { t += c.choices[0]?.delta?.content ?? ""; if (c.usage) u = c.usage; } console.log("openai stream:", t, JSON.stringify(u));
console.log("responses:", (await o.responses.create({ model: "demo-gemini/gemini-demo", input: "hi" })).output_text);
const rs = await o.responses.create({ model: "demo", input: "hi", stream: true }); let n = 0; for await (const e of rs) n++; console.log("responses stream events", n);
console.log("models:", (await o.models.list()).data.map((m) => m.id));
const a = new Anthropic({ baseURL: U, apiKey: "placeholder" });
console.log("anthropic:", JSON.stringify((await a.messages.create({ model: "fast", max_tokens: 50, messages: [{ role: "user", content: "hi" }] })).content));
const st = a.messages.stream({ model: "demo-gemini/gemini-demo", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }); console.log("anthropic stream:", (await st.finalMessage()).content[0]);
console.log("count:", await a.messages.countTokens({ model: "demo", messages: [{ role: "user", content: "hello there" }] }));
console.log("anth models:", (await a.models.list()).data.map((m) => m.id));
const g = new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: U } });
console.log("genai:", (await g.models.generateContent({ model: "fast", contents: "hi" })).text);
let gt = ""; for await (const c of await g.models.generateContentStream({ model: "demo", contents: "hi" })) gt += c.text ?? ""; console.log("genai stream:", gt);
console.log("genai count:", JSON.stringify(await g.models.countTokens({ model: "demo", contents: "hello there" })));
const pager = await g.models.list(); const ids = []; for await (const m of pager) ids.push(m.name); console.log("genai models:", ids);
try { await o.chat.completions.create({ model: "nope/x", messages: [{ role: "user", content: "hi" }] }); } catch (e) { console.log("err openai:", e.status, e.message); }
try { await a.messages.create({ model: "nope/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }); } catch (e) { console.log("err anthropic:", e.status, e.message); }
try { await g.models.generateContent({ model: "nope/x", contents: "hi" }); } catch (e) { console.log("err genai:", e.status, e.message?.slice(0, 300)); }
