/**
 * What "shaped like a key" means for switchyard: the well-known credential token shapes that redaction
 * (pipeline/redact.ts, SPEC S-3: replaced by `[SECRET_n]` before a prompt goes upstream) and the secret
 * scrubber (pipeline/scrub.ts: `[redacted]` in route traces, logs, the flight recorder, alerts) both
 * recognise. One list for both: until 2026-12-05 the scrubber knew only `sk-`, `sy-`, `AIza`, `ya29.`
 * and JWTs, so a GitHub, GitLab, Slack or AWS key in a prompt was replaced upstream by redaction and
 * kept in clear in the flight recorder (newuser15's tryout, N7).
 *
 * Sources of the shapes: each vendor's documented token prefix (OpenAI `sk-`/`sk-proj-`, Anthropic
 * `sk-ant-`, Stripe `sk_live_`/`rk_live_`, AWS access key ids `AKIA`/`ASIA` + 16, GitHub `ghp_`/`gho_`/
 * `ghu_`/`ghs_`/`ghr_`/`github_pat_`, Slack `xox?-`, Google `AIza`/`ya29.`, GitLab `glpat-`, npm `npm_`,
 * Hugging Face `hf_`, switchyard `sy-`, JWTs `eyJ….eyJ….…`).
 */

/**
 * The alternation of the token shapes (regex source, no groups, no anchors): a token matches when it
 * is one of these and is neither preceded nor followed by `[A-Za-z0-9_-]` (see {@link KEY_SHAPE_BEFORE},
 * {@link KEY_SHAPE_AFTER}).
 */
export const KEY_SHAPES_SOURCE =
  "(?:sk-(?:ant-|proj-|live-|test-|or-)?[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{20,}|ya29\\.[A-Za-z0-9_.-]{20,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|sy-[A-Za-z0-9_-]{16,}|eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,})";

/** Lookbehind: a key-shaped token does not start inside a word. */
export const KEY_SHAPE_BEFORE = "(?<![A-Za-z0-9_-])";
/** Lookahead: a key-shaped token does not end inside a word. */
export const KEY_SHAPE_AFTER = "(?![A-Za-z0-9_-])";

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/g;
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g;

/**
 * `text` with each PEM private-key block (a BEGIN line to the next END line, whatever lies between:
 * `Proc-Type:` headers too) replaced by `replace(block)`. Two searches, not one regex: a lazy
 * `BEGIN[\s\S]+?END` scans to the end of the text for every BEGIN without an END, so a text of such lines
 * cost O(lines × length) (200 KB of them 5 s of a blocked event loop, through any error answer that
 * echoes the client's input; review15 R0). Here each character is read at most twice; once a BEGIN has
 * no END after it, no later one has either.
 */
export function replacePrivateKeyBlocks(text: string, replace: (block: string) => string): string {
  if (!text.includes("PRIVATE KEY-----")) return text;
  let out = "";
  let from = 0;
  for (;;) {
    PEM_BEGIN.lastIndex = from;
    const begin = PEM_BEGIN.exec(text);
    if (!begin) break;
    PEM_END.lastIndex = begin.index + begin[0].length;
    const end = PEM_END.exec(text);
    if (!end) break;
    const stop = end.index + end[0].length;
    out += text.slice(from, begin.index) + replace(text.slice(begin.index, stop));
    from = stop;
  }
  return from === 0 ? text : out + text.slice(from);
}
