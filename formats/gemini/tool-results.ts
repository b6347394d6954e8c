/**
 * Tool-result text slots of a Gemini `generateContent` request body (REFERENCE §4), for the token
 * savers (SPEC S-1), which shorten tool results on the body about to be sent. Pure and lenient.
 *
 * Tool results are `contents[].parts[].functionResponse.response`, always an object (formats/gemini
 * writes `{result: text}`, `{error: text}` for an error, or the parsed object when the text was a JSON
 * object; Gemini CLI writes `{output: text}`, the key the Gemini API documents for a function's
 * output). Only the string `error`, `output`, `result` or `content` member is a text slot (the members
 * parse.ts reads as a result's text); a structured response is not.
 */
import type { ToolResultSlot } from "../codec.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";
import { stringLeafSlots } from "../string-leaves.ts";

/** The members of a function response that hold its output text, in the order they are looked for. */
const RESULT_KEYS = ["output", "result", "content"] as const;

/**
 * The `functionResponse.response.output` / `.result` / `.content` (or `.error`, with `isError`) strings of every function
 * response part, in body order (SPEC S-1).
 */
export function toolResults(body: Obj): ToolResultSlot[] {
  const out: ToolResultSlot[] = [];
  let result = 0;
  const contents = Array.isArray(body.contents) ? body.contents : [];
  for (const c of contents) {
    if (!isObj(c) || !Array.isArray(c.parts)) continue;
    for (const p of c.parts) {
      if (!isObj(p) || !isObj(p.functionResponse)) continue;
      const response = p.functionResponse.response;
      const n = result++;
      if (!isObj(response)) continue;
      const key = typeof response.error === "string" ? "error" : RESULT_KEYS.find((k) => typeof response[k] === "string");
      if (!key) continue;
      out.push({
        text: response[key] as string,
        result: n,
        isError: key === "error",
        set(t: string) {
          response[key] = t;
        },
      });
    }
  }
  return out;
}

/**
 * Every text slot the model reads in a Gemini client body (SPEC R-1, redaction): the system
 * instruction's text parts, the text parts of `contents` (not thoughts: signed reasoning), the string
 * leaves of the model's `functionCall.args` and of `functionResponse.response` (tool results), nested
 * members included (values, and member names: formats/string-leaves.ts; `numbers`: see
 * `FormatCodec.promptText`). Not function names, media, or signatures. Never throws.
 */
export function promptText(body: Obj, numbers?: import("../codec.ts").NumberSlots): import("../codec.ts").TextSlot[] {
  const out: import("../codec.ts").TextSlot[] = [];
  const textParts = (parts: unknown) => {
    if (!Array.isArray(parts)) return;
    for (const p of parts) {
      if (!isObj(p)) continue;
      if (typeof p.text === "string" && p.text.length > 0 && p.thought !== true) {
        out.push({
          text: p.text,
          set(t: string) {
            p.text = t;
          },
        });
      }
      // The model's earlier calls and the tools' answers, nested members included.
      if (isObj(p.functionCall)) stringLeafSlots(p.functionCall.args, out, numbers);
      if (isObj(p.functionResponse)) stringLeafSlots(p.functionResponse.response, out, numbers);
    }
  };
  const si = body.systemInstruction;
  if (isObj(si)) textParts(si.parts);
  else if (typeof si === "string" && si.length > 0) {
    out.push({
      text: si,
      set(t: string) {
        body.systemInstruction = t;
      },
    });
  }
  if (Array.isArray(body.contents)) for (const c of body.contents) if (isObj(c)) textParts(c.parts);
  return out;
}
