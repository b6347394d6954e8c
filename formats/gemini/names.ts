/**
 * Gemini function names (REFERENCE §4.1): must start with a letter or an underscore, contain only
 * `[a-zA-Z0-9_.:-]`, at most 128 characters. Other formats allow more (MCP tools with `/`, names with
 * spaces), so names are mapped deterministically per request, collision-safe, and the reverse map lets
 * a decoder give the client back the name it declared.
 */

const VALID = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/;
const MAX = 128;

/** Replaces invalid characters with `_`, prefixes `_` when the first character is not allowed, cuts to 128. */
export function sanitizeGeminiName(name: string): string {
  if (VALID.test(name)) return name;
  let out = name.replace(/[^a-zA-Z0-9_.:-]/g, "_");
  if (!/^[a-zA-Z_]/.test(out)) out = `_${out}`;
  return out.slice(0, MAX);
}

/**
 * A per-request name map: `toGemini(name)` returns the same Gemini name for the same client name every
 * time, never the same Gemini name for two different client names (a numeric suffix resolves clashes).
 */
export class GeminiNameMap {
  private readonly forward = new Map<string, string>();
  private readonly used = new Map<string, string>();

  toGemini(name: string): string {
    const known = this.forward.get(name);
    if (known !== undefined) return known;
    let out = sanitizeGeminiName(name);
    if (this.used.has(out) && this.used.get(out) !== name) {
      const base = out.slice(0, MAX - 4);
      for (let i = 2; this.used.has(out); i++) out = `${base}_${i}`;
    }
    this.forward.set(name, out);
    this.used.set(out, name);
    return out;
  }

  /** Gemini name → client name, only for names that changed. */
  renamed(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [gem, orig] of this.used) if (gem !== orig) out[gem] = orig;
    return out;
  }
}
