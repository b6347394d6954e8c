/**
 * The command line's two outputs (SPEC 2.2): a line on stdout, or an error on stderr and the exit with
 * a code (1 for a failure, 2 for a usage error). Neither writes a control character raw: what the CLI
 * prints holds strings a client chose (model names, upstream error messages, recorded bodies), and an
 * ESC, OSC, BEL or CR written raw would recolour, retitle or rewrite the operator's terminal. An error
 * holds paths, file contents, config values and what the user typed: it is escaped whole, line breaks
 * included, so that none of them can print a line of its own either.
 */

/**
 * Every C0 control character, DEL, every C1 control character (U+0080–U+009F), the Unicode
 * bidirectional controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069: a U+202E in a model name
 * reverses how the rest of its table row reads) and the line and paragraph separators U+2028/2029.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, less the line break and tab that lay out the CLI's own lines and tables. */
const CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON's short escapes; the other control characters read as \uXXXX, as JSON writes them. */
const SHORT: Record<string, string> = { "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };
const escapeOne = (c: string) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A value (a cell, a name, a message) as the terminal may show it: each C0 control character, DEL, C1
 * control character, bidi control and U+2028/2029 escaped visibly (`\u001b`, `\r`, `\n`, `\t`,
 * `\u009b`, `\u202e`…), so it stays on one line, reads in its own order and cannot drive the terminal.
 * Other characters (and backslashes) are kept as they are. Every string a client, an upstream or the
 * store chose goes through it before {@link out}, which keeps line breaks and tabs ({@link fail} escapes
 * its whole message, line breaks included).
 */
export function visible(value: string): string {
  return value.replace(CONTROL, escapeOne);
}

/**
 * Text as the CLI writes it: control characters escaped as {@link visible} does, except the line
 * breaks and tabs of the text's own layout. JSON text stays JSON (DEL and C1 become JSON escapes).
 */
export function printable(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT, escapeOne);
}

/** Writes one line to stdout, its control characters escaped ({@link printable}). */
export function out(line: string): void {
  process.stdout.write(printable(line) + "\n");
}

/**
 * Writes an error to stderr and exits with `code` (default 1): one line, or each of `lines` on a line of
 * its own (a usage text, one problem a line), every control character in each escaped as
 * {@link visible} does, line breaks and tabs too. An error's text is built from paths, file contents,
 * config values, a browser's redirect and what the user typed (`cannot import: PATH: …`), so a file
 * name or value holding "\n…" cannot print a line that reads as the CLI's own (until session 37 `fail`
 * kept line breaks and tabs, as {@link out} does; ESC, OSC, CR and the rest were escaped already). The
 * one place every CLI error is printed (src/main.ts's catch of a command's error included).
 */
export function fail(lines: string | readonly string[], code = 1): never {
  process.stderr.write((typeof lines === "string" ? visible(lines) : lines.map(visible).join("\n")) + "\n");
  process.exit(code);
}
