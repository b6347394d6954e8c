/**
 * The command line's table of commands (SPEC 2.2): what each command, or `command subcommand`, takes
 * (its options and how many words), read by src/main.ts to refuse what a command does not take and by
 * the commands with sub-commands (`keys`, `accounts`, …) to name the ones they take
 * (src/cli/unknown-subcommand.ts), so that a sub-command added here is known everywhere at once.
 */

/** The options that find the running instance (every command that talks to it). */
const INSTANCE_OPTIONS = ["data-dir", "url", "key"] as const;

/** What a command (or `command subcommand`) takes on its command line ({@link COMMANDS}). */
export interface CommandTakes {
  /**
   * The options it takes (src/main.ts `CLI_OPTIONS` names, without `--`), besides --help and --version. Any other
   * option is refused (exit 2), never ignored: `service install --dry-run` parsed as setup's
   * `--dry-run` and then installed and started the service; `usage --limit 5` printed everything.
   */
  options: readonly string[];
  /**
   * How many words it takes after the command's name (its subcommand and argument): any word beyond
   * these is refused (exit 2), never ignored: `usage 7d` meant `--since 7d` and printed the last 24 h.
   */
  words: number;
}

/**
 * Each command's (or `command subcommand`'s) options and words, one entry per name. A command whose
 * subcommand is not listed takes the union of its subcommands' options (its own check then says what
 * the subcommand must be). Every option named in a command's usage lines is one it takes, and every
 * option it takes is named in its help (test/cli/main-args).
 */
export const COMMANDS: Record<string, CommandTakes> = {
  start: { options: ["config", "host", "port", "data-dir", "database"], words: 0 },
  stop: { options: ["data-dir", "timeout", "force"], words: 0 },
  "check-config": { options: ["config"], words: 1 },
  "keys create": { options: [...INSTANCE_OPTIONS, "scope", "tag", "rpm", "tpm", "concurrency", "budget", "models"], words: 2 },
  "keys list": { options: [...INSTANCE_OPTIONS, "json"], words: 1 },
  "keys set": { options: [...INSTANCE_OPTIONS, "scope", "tag", "rpm", "tpm", "concurrency", "budget", "models"], words: 2 },
  "keys revoke": { options: [...INSTANCE_OPTIONS], words: 2 },
  "keys rotate": { options: [...INSTANCE_OPTIONS, "grace"], words: 2 },
  "keys disable": { options: [...INSTANCE_OPTIONS], words: 2 },
  "keys enable": { options: [...INSTANCE_OPTIONS], words: 2 },
  usage: { options: [...INSTANCE_OPTIONS, "since", "by", "json"], words: 0 },
  "calls list": { options: [...INSTANCE_OPTIONS, "limit", "json"], words: 1 },
  "calls inspect": { options: [...INSTANCE_OPTIONS, "bodies", "json"], words: 2 },
  route: { options: [...INSTANCE_OPTIONS, "body", "format", "header", "json"], words: 1 },
  "accounts status": { options: [...INSTANCE_OPTIONS, "json"], words: 1 },
  "accounts remove": { options: [...INSTANCE_OPTIONS], words: 2 },
  "accounts restore": { options: [...INSTANCE_OPTIONS], words: 3 },
  "accounts unlock": { options: [...INSTANCE_OPTIONS], words: 2 },
  "accounts close-circuit": { options: [...INSTANCE_OPTIONS], words: 2 },
  login: { options: [...INSTANCE_OPTIONS, "account", "provider", "priority", "no-browser"], words: 1 },
  import: { options: [...INSTANCE_OPTIONS, "from", "account", "provider", "priority"], words: 1 },
  service: { options: ["config", "data-dir", "host", "port"], words: 1 },
  setup: { options: ["data-dir", "url", "key", "client-key", "model", "utility-model", "dry-run", "codex-bin", "undo"], words: 1 },
  reload: { options: [...INSTANCE_OPTIONS, "json"], words: 0 },
  version: { options: ["data-dir", "database"], words: 0 },
};

/**
 * The sub-commands `cmd` takes: the second word of every {@link COMMANDS} entry named `cmd WORD`, in the
 * table's order (`keys` → create, list, set, revoke, rotate, disable, enable); empty for a command
 * without sub-commands or an unknown one.
 */
export function subcommandsOf(cmd: string): string[] {
  const prefix = `${cmd} `;
  return Object.keys(COMMANDS)
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length));
}
