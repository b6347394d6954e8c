/**
 * What `switchyard setup` is called with, as text: one source for the command line (src/main.ts's usage
 * line and `setup cursor`) and the dashboard's Setup page (src/dashboard/client/pages/setup.tsx, bundled
 * for the browser: this module imports nothing), so the page shows the very commands the CLI takes.
 */

/** The CLIs whose settings `switchyard setup` writes (SPEC 2.2). */
export const SETUP_CLIS = ["claude-code", "codex", "gemini"] as const;

/** One of {@link SETUP_CLIS}. */
export type SetupCli = (typeof SETUP_CLIS)[number];

/** Each CLI's name as its users know it. */
export const SETUP_CLI_NAMES: Record<SetupCli, string> = { "claude-code": "Claude Code", codex: "Codex CLI", gemini: "Gemini CLI" };

/** The usage lines of `switchyard setup` (every option it takes), as `switchyard --help` prints them (second line indented). */
export const SETUP_USAGE =
  "switchyard setup claude-code|codex|gemini [--model NAME] [--utility-model NAME] [--dry-run]\n" +
  "                   [--client-key KEY] [--codex-bin PATH] | setup claude-code|codex|gemini --undo [--dry-run]\n" +
  "                   | setup cursor [--client-key KEY]";

/**
 * The `switchyard setup CLI` command for a gateway at `url` (no trailing slash), with `--model` when
 * `model` is given and `--client-key` when `clientKey` is. With `width`, the words after `setup CLI`
 * go on lines continued with ` \` so that no line is longer than `width` characters where it can be
 * helped (a card on the Setup page); without it, one line.
 */
export function setupCommandLine(cli: SetupCli, url: string, opts: { model?: string; clientKey?: string; width?: number } = {}): string {
  const parts = [`--url ${url}`];
  if (opts.model !== undefined) parts.push(`--model ${opts.model}`);
  if (opts.clientKey !== undefined) parts.push(`--client-key ${opts.clientKey}`);
  const head = `switchyard setup ${cli}`;
  if (opts.width === undefined) return [head, ...parts].join(" ");
  const lines = [head];
  for (const p of parts) {
    const last = lines.length - 1;
    if (`${lines[last]} ${p} \\`.length <= opts.width) lines[last] = `${lines[last]} ${p}`;
    else lines.push(`  ${p}`);
  }
  return lines.join(" \\\n");
}

/**
 * What to do in Cursor, whose settings `switchyard setup` does not write (Cursor keeps them in its
 * own app storage, edited in its Settings window): the lines `switchyard setup cursor` prints and the
 * Setup page shows, for a gateway at `url` and the client key `key` (a placeholder, never a secret
 * on the page). Cursor sends a custom key's requests from its own servers, so a gateway they cannot
 * reach (127.0.0.1) serves none of them; the last lines say so.
 */
export function cursorSteps(url: string, key: string): string[] {
  return [
    "In Cursor (switchyard setup does not edit its settings, kept in its app storage):",
    "  1. Settings → Models → API Keys: turn on OpenAI API Key and enter",
    `     ${key}`,
    "  2. turn on Override OpenAI Base URL and enter",
    `     ${url}/v1`,
    "  3. add the model names to use (a combo, an alias or provider/model)",
    "Cursor sends these requests from its own servers, not from this machine:",
    "they reach the gateway only at an address those servers can reach (not",
    "127.0.0.1), so expose it only with keys required.",
  ];
}
