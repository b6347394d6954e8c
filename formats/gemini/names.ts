/**
 * Gemini function names (REFERENCE §4.1): must start with a letter or an underscore, contain only
 * `[a-zA-Z0-9_.:-]`, at most 128 characters. Other formats allow more (MCP tools with `/`, names with
 * spaces), so names are mapped deterministically per request, collision-safe, and the reverse map lets
 * a decoder give the client back the name it declared (the shared map: formats/tool-names.ts).
 */
import { ToolNameMap, type ToolNameRule } from "../tool-names.ts";

const VALID = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/;
const MAX = 128;

/** Replaces invalid characters with `_`, prefixes `_` when the first character is not allowed, cuts to 128. */
export function sanitizeGeminiName(name: string): string {
  if (VALID.test(name)) return name;
  let out = name.replace(/[^a-zA-Z0-9_.:-]/g, "_");
  if (!/^[a-zA-Z_]/.test(out)) out = `_${out}`;
  return out.slice(0, MAX);
}

/** Gemini's rule for {@link ToolNameMap}. */
export const GEMINI_TOOL_NAMES: ToolNameRule = { valid: VALID, max: MAX, sanitize: sanitizeGeminiName };

/** A {@link ToolNameMap} for Gemini's rule; `toGemini` is its `map`. */
export class GeminiNameMap extends ToolNameMap {
  constructor() {
    super(GEMINI_TOOL_NAMES);
  }

  toGemini(name: string): string {
    return this.map(name);
  }
}
