/**
 * The clients' own wrappers around a command's output in a tool result, which the token savers keep byte
 * for byte while they shorten the output between them (SPEC S-1; pipeline/savers/index.ts): Codex's exec
 * header, Claude Code's trailing `<system-reminder>` blocks, Gemini CLI's shell-result lines.
 *
 * Every tail is found by walking back from the end of the text, never by a regex that is not anchored
 * at its start: a text of any shape costs one pass (an unanchored `(…[\s\S]*?…)+\s*$` tail backtracked
 * for seconds on a 2 KB result holding many reminder blocks followed by other text, blocking the
 * gateway's thread; review of 2026-12-05, R5 and R1).
 */

/**
 * Codex's exec-result header, up to and including its `Output:` line, and the lines Codex adds when it
 * cut the output itself (`Warning: truncated output (original token count: N)`, `Total output lines: N`
 * and a blank line; 0.171.0, seen by newuser13's tryout, J12). Anchored, each line bounded.
 */
const CODEX_HEADER =
  /^(?:(?:[A-Z][A-Za-z ]{1,30}: [^\n]*|Process exited with code -?\d+|Process running with session ID \d+)\n){1,8}Output:\n(?:(?:Warning: truncated output \(original token count: \d+\)\n)?Total output lines: \d+\n\n)?/;

/**
 * Gemini CLI's `run_shell_command` result (0.61.0's bundle, observed by newuser13's tryout): `Output: `
 * and the command's output from its first line, then one line each of `Error: …`, `Exit Code: N`,
 * `Signal: …`, `Background PIDs: …`, `Process Group PGID: N` when they apply (in that order), the whole
 * wrapped in `<untrusted_context>\n` … `\n</untrusted_context>` (its `wrapUntrusted`).
 */
const GEMINI_HEAD = /^(?:<untrusted_context>\n)?Output: /;
/** Gemini CLI's trailer lines, in the order it writes them. */
const GEMINI_TRAILERS = ["Error: ", "Exit Code: ", "Signal: ", "Background PIDs: ", "Process Group PGID: "] as const;
const GEMINI_CLOSE = "\n</untrusted_context>";

const REMINDER_OPEN = "<system-reminder>";
const REMINDER_CLOSE = "</system-reminder>";

/** Splits `text` into the client's wrapper (head, tail) and the command output between them. */
export function envelope(text: string): { head: string; body: string; tail: string } {
  let head = "";
  let body = text;
  const codex = CODEX_HEADER.exec(body);
  const gemini = codex ? null : GEMINI_HEAD.exec(body);
  const h = codex ?? gemini;
  if (h) {
    head = h[0];
    body = body.slice(head.length);
  }
  // a text that only starts like Gemini CLI's (`Output: `) may still end with Claude Code's reminders
  const g = gemini ? geminiTailStart(body) : -1;
  const at = g > 0 ? g : reminderTailStart(body);
  if (at <= 0) return { head, body, tail: "" };
  return { head, body: body.slice(0, at), tail: body.slice(at) };
}

/**
 * Where Gemini CLI's trailer starts in `body` (the text after its `Output: `): its trailer lines (each
 * kind at most once, in its order), then `\n</untrusted_context>`, then an optional newline; -1 when
 * the text ends with none of them.
 */
function geminiTailStart(body: string): number {
  let end = body.endsWith("\n") ? body.length - 1 : body.length;
  if (body.startsWith(GEMINI_CLOSE, end - GEMINI_CLOSE.length)) end -= GEMINI_CLOSE.length;
  let kind: number = GEMINI_TRAILERS.length;
  for (;;) {
    const nl = body.lastIndexOf("\n", end - 1);
    if (nl < 0) break;
    const line = body.slice(nl + 1, end);
    let k = kind - 1;
    while (k >= 0 && !line.startsWith(GEMINI_TRAILERS[k]!)) k--;
    if (k < 0) break;
    kind = k;
    end = nl;
  }
  return end < body.length ? end : -1;
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9 || c === 12 || c === 11;

/**
 * Where Claude Code's trailing `<system-reminder>` blocks start in `body`, with the whitespace before
 * and between them; -1 when the text does not end with one. Walks back block by block: each step
 * skips whitespace, needs `</system-reminder>` there, and goes to the `<system-reminder>` before it.
 */
function reminderTailStart(body: string): number {
  let end = body.length;
  let start = -1;
  for (;;) {
    let e = end;
    while (e > 0 && isSpace(body.charCodeAt(e - 1))) e--;
    if (!body.startsWith(REMINDER_CLOSE, e - REMINDER_CLOSE.length)) break;
    const open = body.lastIndexOf(REMINDER_OPEN, e - REMINDER_CLOSE.length);
    if (open < 0) break;
    start = open;
    end = open;
  }
  if (start < 0) return -1;
  while (start > 0 && isSpace(body.charCodeAt(start - 1))) start--;
  return start;
}
