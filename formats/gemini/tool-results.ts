/**
 * Tool-result text slots of a Gemini `generateContent` request body (REFERENCE §4), for the token
 * savers (SPEC S-1), which shorten tool results on the body about to be sent. Pure and lenient.
 *
 * Tool results are `contents[].parts[].functionResponse.response`, always an object (formats/gemini
 * writes `{result: text}`, `{error: text}` for an error, or the parsed object when the text was a JSON
 * object). Only the string `result` / `error` members are text slots; a structured response is not.
 * Gemini is not a client format yet, so there is no `promptText` (redaction runs on client bodies).
 */
import type { ToolResultSlot } from "../codec.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";

/**
 * The `functionResponse.response.result` (or `.error`, with `isError`) strings of every function
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
      const key = typeof response.error === "string" ? "error" : typeof response.result === "string" ? "result" : undefined;
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
