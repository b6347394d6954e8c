#!/usr/bin/env bun
/**
 * The `switchyard` command line (SPEC 2.2). `start`, `stop`, `check-config`, `service` and `version` work on their own;
 * the other commands talk to the running instance through its admin API, found through
 * `--data-dir/instance.json` (default `$SWITCHYARD_HOME`, else `~/.switchyard`) or `--url`.
 */
import { existsSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, issueText, ROOT_PATH } from "./config/errors.ts";
import { buildInfo, buildSource } from "./version.ts";
import { suggest } from "./unknown-keys.ts";
import { admin, instanceOnEphemeralPort, instanceUrl, notAnswering, urlProblem } from "./cli/instance.ts";
import { fail, out, printable, visible } from "./cli/terminal.ts";
import { SETUP_CLIS, SETUP_USAGE } from "./setup-commands.ts";
import { table } from "./cli/table.ts";
import { COMMANDS, subcommandsOf, type CommandTakes } from "./cli/command-table.ts";

export { COMMANDS, type CommandTakes };
import type { CostSplit, UsageGrouping } from "./cli/usage-table.ts";
import type { ReloadAnswer } from "./cli/reload.ts";
// Each command's own module (src/cli/, the OAuth login, the setup's diff, the config check) is imported
// by that command only: `start` never loads them, so the gateway's idle memory does not hold them
// (issue 17; the compiled binary still contains them all).

const USAGE = `switchyard — a local-first LLM gateway

Usage:
  switchyard start [--config FILE] [--host H] [--port P] [--data-dir DIR] [--database postgres://…]
  switchyard stop [--data-dir DIR] [--timeout SECONDS] [--force]
  switchyard check-config [FILE]
  switchyard keys create NAME [--scope admin] [--tag TAG] [--rpm N] [--tpm N] [--concurrency N]
                   [--budget WINDOW:tokens|usd:AMOUNT]... [--models LIST]... | keys list [--json] | keys revoke NAME
                   | keys set NAME [--scope admin|none] [--tag TAG] [--rpm N|none] [--tpm N|none] [--concurrency N|none]
                   [--budget WINDOW:tokens|usd:AMOUNT|none]... [--models LIST|none]...
                   | keys rotate NAME [--grace DURATION] | keys disable NAME | keys enable NAME
  switchyard usage [--since 24h] [--by model|account|key|provider|instance] [--json]
  switchyard calls list [--limit N] [--json] | calls inspect ROUTE_ID [--bodies] [--json]
  switchyard route MODEL [--body FILE] [--format FORMAT] [--header "Name: value"]... [--json]
  switchyard accounts status [--json] | accounts remove ID | accounts restore ID [MODEL] | accounts unlock ID
                   | accounts close-circuit PROVIDER
  switchyard login claude-code|codex [--account NAME] [--provider ID] [--priority N] [--no-browser]
  switchyard import claude-code|codex [--from PATH] [--account NAME] [--provider ID] [--priority N]
  switchyard service install|uninstall|status [--config FILE] [--data-dir DIR] [--host H] [--port P]
  ${SETUP_USAGE}
  switchyard reload [--json]
  switchyard version (or --version) [--data-dir DIR | --database postgres://…]

Commands other than start, stop, check-config, service and version talk to the running instance
(--data-dir DIR or --url http://127.0.0.1:PORT [--key ADMIN_KEY]); --key is always the admin key
there, except for setup, whose key is the client key the CLI will send (--client-key).
switchyard COMMAND --help says what a command does.`;

/** What each command does, for `switchyard COMMAND --help` (README "Command line" says more). */
const COMMAND_HELP: Record<string, string> = {
  start: "Runs the gateway in the foreground: one JSON log line per request on stdout. Without --config it reads $SWITCHYARD_HOME/config.yaml (default ~/.switchyard/config.yaml) when it exists, else a built-in default with one account per ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY found in the environment. --database postgres://… shares state with other instances.",
  stop: "Stops the instance running with the data directory (--data-dir DIR, default $SWITCHYARD_HOME, else ~/.switchyard) as SIGTERM does: requests in flight finish within the grace period (server.shutdown_grace_ms, default 30 s), the last usage is written and instance.json removed; then waits until its process has exited and prints one line with the exit code the instance left in the data directory (last-exit.json): (exit code 0), exit 0; another code is a failure, said with what made the stop fail, exit 1; an instance killed or crashed meanwhile leaves none, and stop says its exit code is not known, exit 0. Only the process that holds the data directory's instance.lock, and that its instance.json names, is signalled: a lock held from another container or PID namespace is refused (stop it there), exit 1. An instance stopping already is not signalled again (that would end its grace period): stop says so and waits for it. Nothing running there: says so, exit 0 (as systemctl stop of a stopped unit); an earlier version's instance.json or lock naming a live process: says how to stop it, exit 1. Not exited within --timeout SECONDS (default 60): says so, exit 1, and leaves it stopping (stop again only waits); with --force it is then killed (SIGKILL: its last requests and usage may be lost), exit 1.",
  "check-config": "Validates a config file (FILE, or --config FILE; without either, the file start reads without --config: $SWITCHYARD_HOME/config.yaml, else ~/.switchyard/config.yaml) without starting anything: each problem names its path in the file (combos[1].targets[0].model: …); a good file gets one ok: line. Exit 1 when the file cannot be used.",
  keys: "Client keys callers present as Authorization: Bearer KEY or x-api-key. create prints the secret once, alone on the last line; --rpm, --tpm, --concurrency, --budget (repeatable, e.g. 1d:usd:25 or 5h:tokens:3000000) and --models (comma-separated names or provider/* patterns; repeatable, the lists add up) set its limits; --scope admin lets it use the admin API and dashboard. list shows this minute's use and budget use; set changes a key's limits, tag or scopes with the same flags (none clears a limit: --rpm none; --budget replaces its budgets, --models its list; --tag '' removes the tag; --scope none takes the admin scope away), keeping its secret and the use of its limits so far (a budget raised keeps what was spent in its window), the next request checked against them; revoke stops the key at once, its requests refused (401 invalid_api_key), except from this machine while server.require_api_key is off: a key the gateway does not accept is taken there for a placeholder, so a revoked key's requests from loopback are still served, counted under no key and outside its limits (set server.require_api_key: true to refuse them); rotate gives it a new secret (printed once) keeping its limits and their use, the old secret accepted for --grace more (e.g. 10m; default 0); disable refuses its requests for a while (403 key_disabled) keeping everything, enable serves them again.",
  usage: "Token usage, request counts and cost (USD) per model (the provider/model that served it), account, key, provider or instance (which of several on one store served it) over --since (e.g. 30m, 24h, 7d); --by key adds budget use; quota windows of the accounts follow.",
  calls: "list: recent requests, newest first (--limit, at most 1,000), each with its cost (USD at API prices; unpriced for a model without a price, $0.024 + unpriced when only part of the call had one), how it came (http, websocket: Codex's Responses WebSocket, unknown: recorded before switchyard kept it) and, when a listed call had some, its web searches. inspect ROUTE_ID: the route trace of one request (its X-Switchyard-Route-Id): candidates, decisions, attempts and errors; --bodies adds the flight recorder's bodies (a WebSocket call's reply as the JSON frames it sent, one a line).",
  route: "Dry run: the ordered candidates for a one-message request to MODEL (or the client body in --body FILE, - for stdin) and why each is in, out or moved; nothing is sent upstream.",
  accounts: "status: each account's eligibility per model (cooldowns, locks, quota windows, slots). remove ID: deletes an account stored by login or import, with its state. restore ID [MODEL]: lets the account serve MODEL (default: every model) again now, after a 404 model not found or a model-scoped 403 removed that pairing (it would come back by itself 24 h after the removal); exit 1 when the account is unknown. unlock ID: clears the account's lock (a 401, exhausted quota, a ban, a 402) now, once its key works again (a lock until changed also ends when the account's key is replaced and the config reloaded); exit 1 when the account is unknown. close-circuit PROVIDER: closes the provider's circuit (opened by 10 consecutive 5xx for 5 minutes) now, on every instance of a shared store; exit 1 when the provider is unknown.",
  login: "Runs the vendor's OAuth (PKCE) login in the browser (--no-browser prints the address instead) and hands the subscription's tokens to the running gateway. --priority N places the account in its provider's list (lower first, as accounts[].priority in the config file; default 0, or what the account had).",
  import: "Adopts the credentials Claude Code (~/.claude/.credentials.json) or Codex (~/.codex/auth.json) already keep, without touching the files. --priority N places the account in its provider's list (lower first, as accounts[].priority in the config file; default 0, or what the account had).",
  service: "install writes a systemd user unit (Linux) or launchd agent (macOS) running switchyard start, with the secrets the config reads from the environment in DATA_DIR/service.env; uninstall removes it and that service.env (one holding lines added or changed by hand is kept as service.env.bak, and said so); status shows it.",
  setup: "Points that CLI at the running gateway by writing its own settings files (Claude Code's ~/.claude/settings.json, Codex's ~/.codex/config.toml, Gemini CLI's ~/.gemini/.env and settings.json), with --model's context window so the CLI compacts in time. For Gemini CLI, --model (or --utility-model NAME) also names the model its utility tasks use (session summaries, next-speaker and loop checks, chat compression), which otherwise ask for gemini-…-flash-lite and other Gemini ids even with -m. Only its own keys change and the diff is printed; --dry-run writes nothing. Before the first setup a file that exists is copied to FILE.switchyard-original (never overwritten by later runs; later runs keep FILE.switchyard-backup-<ms>), and a file setup creates is noted as such (in switchyard-setup.json beside it).\n\n--undo puts that CLI's settings back as they were before the first setup (needs no running gateway): each original is copied back byte for byte, with its mode, and each file setup created is removed; a file changed since setup wrote it is left as it is (your edits stay), with what to do by hand (once you have copied the original back over it, --undo finishes); --undo --dry-run says what it would do.\n\nsetup cursor prints what to enter in Cursor's settings (setup does not edit them).\n\n--client-key KEY is the client key the CLI will send and setup writes into its settings (default $SWITCHYARD_KEY, else a placeholder that works from this machine while keys are not required); setup checks it against the gateway first. --key is an older name for --client-key here (for every other command --key is the admin key).",
  reload: "Makes the running instance re-read its config file now (as SIGHUP does) and prints what changed, which changed settings take effect only when it is restarted (server.host, server.port, server.database) and the file's warnings. A file with errors is refused with them (exit 1) and the running configuration stays.",
  version: "Prints the version and build. With --data-dir DIR (its switchyard.db) or --database URL, also the schema the store records and what this build does with it: reads it as it is, migrates it at its next start (one way), or refuses it as newer (exit 1); it reads only, so it can check a store before an upgrade.",
};

/** Commands that talk to the running instance (every one but start, check-config, service and version). */
const INSTANCE_COMMANDS = new Set(["keys", "usage", "calls", "route", "accounts", "login", "import", "setup", "reload"]);

/** Words other tools use for a command of switchyard's (`check`, `validate` for check-config). */
const COMMAND_SYNONYMS: Record<string, string> = { check: "check-config", validate: "check-config", verify: "check-config", lint: "check-config" };

/**
 * The first line for a command word switchyard does not know: `unknown command: check (did you mean
 * "check-config"?)`, a synonym of {@link COMMAND_SYNONYMS} or the closest command name when it is
 * plausibly a typo (src/unknown-keys.ts `suggest`); without either, `unknown command: WORD`.
 */
export function unknownCommand(word: string): string {
  const near = Object.hasOwn(COMMAND_SYNONYMS, word) ? COMMAND_SYNONYMS[word] : suggest(word, Object.keys(COMMAND_HELP));
  return `unknown command: ${word}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}`;
}

/**
 * `switchyard COMMAND --help` (or `switchyard help COMMAND`): the command's usage lines from
 * {@link USAGE}, what it does, and for the commands that talk to the running instance how they find
 * it. Undefined for an unknown command.
 */
export function commandHelp(cmd: string): string | undefined {
  const does = COMMAND_HELP[cmd];
  if (does === undefined) return undefined;
  const lines = USAGE.split("\n");
  const synopsis: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith(`  switchyard ${cmd} `) && lines[i] !== `  switchyard ${cmd}`) continue;
    synopsis.push(lines[i]);
    while (lines[i + 1]?.startsWith("      ")) synopsis.push(lines[++i]);
  }
  const found = "\n\nIt talks to the running instance, found through instance.json in --data-dir DIR (default $SWITCHYARD_HOME, else ~/.switchyard), or at --url http://127.0.0.1:PORT";
  // setup's key is the client key it writes into the CLI's settings, not the admin key of the others
  const where = !INSTANCE_COMMANDS.has(cmd)
    ? ""
    : cmd === "setup"
      ? `${found} (with the admin key in SWITCHYARD_ADMIN_KEY where keys are required; setup takes no admin key on its command line).`
      : `${found} (with --key ADMIN_KEY, or SWITCHYARD_ADMIN_KEY, where keys are required: a key with the admin scope).`;
  return `Usage:\n${synopsis.join("\n")}\n\n${wrap(does)}${wrap(where)}`;
}

/** Wraps text at 100 columns on spaces (blank lines kept). */
function wrap(text: string): string {
  return text
    .split("\n")
    .map((para) => {
      const out: string[] = [];
      let line = "";
      for (const word of para.split(" ")) {
        if (line && line.length + 1 + word.length > 100) {
          out.push(line);
          line = word;
        } else line = line ? `${line} ${word}` : word;
      }
      out.push(line);
      return out.join("\n");
    })
    .join("\n");
}

/** Default data directory: $SWITCHYARD_HOME, else ~/.switchyard (SPEC 2.2). */
export function defaultDataDir(env = process.env): string {
  return env.SWITCHYARD_HOME || join(homedir(), ".switchyard");
}

/** The options every command may take (`parseArgs`'s table). */
const CLI_OPTIONS = {
  config: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  url: { type: "string" },
  key: { type: "string" },
  "client-key": { type: "string" },
  json: { type: "boolean" },
  since: { type: "string" },
  by: { type: "string" },
  limit: { type: "string" },
  scope: { type: "string", multiple: true },
  tag: { type: "string" },
  rpm: { type: "string" },
  tpm: { type: "string" },
  concurrency: { type: "string" },
  budget: { type: "string", multiple: true },
  grace: { type: "string" },
  models: { type: "string", multiple: true },
  body: { type: "string" },
  format: { type: "string" },
  header: { type: "string", multiple: true },
  account: { type: "string" },
  provider: { type: "string" },
  priority: { type: "string" },
  from: { type: "string" },
  "no-browser": { type: "boolean" },
  bodies: { type: "boolean" },
  model: { type: "string" },
  "dry-run": { type: "boolean" },
  "codex-bin": { type: "string" },
  "utility-model": { type: "string" },
  undo: { type: "boolean" },
  timeout: { type: "string" },
  force: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const;

/** The {@link COMMANDS} entry of `cmd sub` when there is one, else of `cmd`, with the name it is listed under; undefined for an unknown command. */
function commandEntry(cmd: string | undefined, sub: string | undefined): { name: string; takes: CommandTakes } | undefined {
  const both = `${cmd} ${sub}`;
  if (sub !== undefined && Object.hasOwn(COMMANDS, both)) return { name: both, takes: COMMANDS[both] };
  if (cmd !== undefined && Object.hasOwn(COMMANDS, cmd)) return { name: cmd, takes: COMMANDS[cmd] };
  return undefined;
}

/** The words after `positionals[0]` that its command does not take ({@link CommandTakes.words}); empty for an unknown command. */
export function wordsNotTaken(positionals: readonly string[]): string[] {
  const [cmd, sub] = positionals;
  const entry = commandEntry(cmd, sub);
  return entry === undefined ? [] : positionals.slice(1 + entry.takes.words);
}

/**
 * The options of `given` (parseArgs' values) that `cmd sub` does not take ({@link CommandTakes.options}),
 * as `--name`; empty for an unknown command (its own error says so).
 */
export function optionsNotTaken(cmd: string, sub: string | undefined, given: Record<string, unknown>): string[] {
  let takes = commandEntry(cmd, sub)?.takes.options;
  if (!takes) {
    const subs = subcommandsOf(cmd);
    if (subs.length === 0) return [];
    takes = subs.flatMap((sub) => COMMANDS[`${cmd} ${sub}`].options);
  }
  return Object.keys(given)
    .filter((name) => name !== "help" && name !== "version" && !takes.includes(name))
    .map((name) => `--${name}`);
}

/**
 * `--rpm -3` as `--rpm=-3`: node's parseArgs takes a value that starts with a dash for an option and
 * refuses it as "ambiguous", so a negative number reached the user as that, not as the flag's own check
 * ("--rpm must be a positive whole number, not "-3"").
 */
function joinNegativeValues(argv: string[], stringOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = argv[i + 1];
    if (a.startsWith("--") && !a.includes("=") && stringOptions.has(a.slice(2)) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The command line's options (SPEC 2.2). Strict: an unknown option throws. */
function parseCli(argv: string[]) {
  const stringOptions = new Set(Object.entries(CLI_OPTIONS).filter(([, o]) => o.type === "string").map(([name]) => name));
  return parseArgs({
    args: joinNegativeValues(argv, stringOptions),
    allowPositionals: true,
    strict: true,
    options: CLI_OPTIONS,
  });
}

/**
 * `switchyard version` and `switchyard --version`: one line: the version, the commit and build time
 * (`scripts/build` sets them; from source the checkout's commit), the store schema this code brings each
 * database to, Bun and the platform. Two builds of one version differ in the commit (newuser14 K2).
 */
async function versionLine(): Promise<string> {
  const b = buildInfo();
  const src = buildSource();
  const [{ SCHEMA_VERSION }, { PG_SCHEMA_VERSION }] = await Promise.all([import("./store/sqlite/migrations.ts"), import("./store/postgres/migrations.ts")]);
  const built = [src.commit ? `commit ${src.commit}` : "commit unknown", ...(src.builtAt ? [`built ${src.builtAt}`] : [])].join(", ");
  return `switchyard ${b.version} (${built}; store schema SQLite ${SCHEMA_VERSION}, PostgreSQL ${PG_SCHEMA_VERSION}; bun ${b.bun}, ${b.platform}-${b.arch})`;
}

/**
 * `switchyard version`: its line; with `--data-dir DIR` or `--database URL` a second line saying the
 * store's schema and whether this build reads, migrates or refuses it (src/cli/read-store-schema.ts;
 * exit 1 when it refuses it or cannot read it).
 */
async function versionCommand(values: Record<string, unknown>, dataDir: string): Promise<void> {
  out(await versionLine());
  if (values["data-dir"] === undefined && values.database === undefined) return;
  const { readStoreSchema } = await import("./cli/read-store-schema.ts");
  const r = await readStoreSchema({ dataDir, database: values.database as string | undefined });
  out(visible(r.line));
  if (r.exitCode !== 0) process.exit(r.exitCode);
}

/**
 * parseArgs' refusal as one line for the user, about the command it was given to (read from the words
 * of a lenient parse), ending with where its help is. An unknown option names what the command takes and
 * the closest of them (`setup codex --dryrun` → "did you mean --dry-run?"), as {@link optionsNotTaken}'s
 * refusal does; parseArgs' own text (with an unbalanced quote) and the whole global usage were printed.
 * An option given no value because the next argument is another option (`usage --since --json`) is
 * what parseArgs calls "ambiguous": say that it needs a value.
 */
function optionError(e: unknown, argv: string[]): string {
  const message = e instanceof Error ? e.message : String(e);
  const [cmd, sub] = parseArgs({ args: argv, allowPositionals: true, strict: false, options: CLI_OPTIONS }).positionals;
  const entry = commandEntry(cmd, sub);
  const help = entry ? ` (switchyard ${cmd} --help says more)` : " (switchyard --help lists the commands and their options)";
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(message);
  if (ambiguous) {
    const next = argv[argv.indexOf(ambiguous[1]) + 1];
    return `${ambiguous[1]} needs a value, and ${JSON.stringify(next)} after it is an option (a value that starts with "-" goes as ${ambiguous[1]}=VALUE)${help}`;
  }
  const missing = /^Option '(--[\w-]+) <value>' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value${help}`;
  const unknown = /^Unknown option '(-[^']*)'/.exec(message);
  if (!unknown) return message.split("\n")[0] + help;
  const takes = (entry?.takes.options ?? Object.keys(CLI_OPTIONS).filter((o) => o !== "help" && o !== "version")).map((o) => `--${o}`);
  const close = suggest(unknown[1].replace(/=.*$/, ""), takes);
  const guess = close ? ` (did you mean ${close}?)` : "";
  if (!entry) return `unknown option ${unknown[1]}${guess}${help}`;
  return `${entry.name} does not take ${unknown[1]}${guess}; it takes ${takes.length ? takes.join(", ") : "no options"}${help}`;
}

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseCli(argv);
  } catch (e) {
    // An unknown or malformed option is an error, never silently ignored (`start --prot 1` must not
    // start on the default port).
    fail(optionError(e, argv), 2);
  }
  const { values, positionals } = parsed;
  const [cmd, sub, arg] = positionals;
  const dataDir = (values["data-dir"] as string | undefined) ?? defaultDataDir();
  if (values.help || cmd === "help") {
    const topic = cmd === "help" ? sub : cmd;
    if (topic === undefined) return out(USAGE);
    const help = commandHelp(topic);
    // an unknown command is the same error with or without --help (`switchyard frob` exits 2 too)
    if (help === undefined) fail([unknownCommand(topic), "", ...USAGE.split("\n")], 2);
    return out(help);
  }
  if (values.version) return versionCommand(values, dataDir);
  if (!cmd) fail(USAGE.split("\n"), 2);
  // --client-key is setup's alone: elsewhere --key is the admin key, and a client key is a request's (route --header)
  if (values["client-key"] !== undefined && cmd !== "setup") {
    const admin = INSTANCE_COMMANDS.has(cmd) ? `; ${cmd} takes the admin key as --key ADMIN_KEY (or SWITCHYARD_ADMIN_KEY)` : "";
    fail(`--client-key is setup's option (the client key it writes for a CLI)${admin}${cmd === "route" ? ', and routes as for a client key given as --header "Authorization: Bearer KEY"' : ""}`, 2);
  }
  const extra = wordsNotTaken(positionals);
  if (extra.length > 0) {
    const command = commandEntry(cmd, sub)!.name;
    const hint = cmd === "usage" && /^\d+[smhd]$/.test(extra[0]) ? ` (for the last ${extra[0]}: --since ${extra[0]})` : "";
    fail(`${command} does not take ${extra.map((w) => JSON.stringify(w)).join(", ")}${hint} (switchyard ${cmd} --help says what it takes)`, 2);
  }
  const notTaken = optionsNotTaken(cmd, sub, values);
  if (notTaken.length > 0) {
    const entry = commandEntry(cmd, sub);
    const command = entry?.name ?? cmd;
    const takes = (entry?.takes.options ?? []).map((o) => `--${o}`);
    // service has no dry run: without this line a user reads the refusal as a typo and drops the flag.
    const noDryRun = cmd === "service" && notTaken.includes("--dry-run") ? "; it has no dry run (install writes the unit and starts the service)" : "";
    fail(`${command} does not take ${notTaken.join(", ")}${noDryRun}; it takes ${takes.length ? takes.join(", ") : "no options"} (switchyard ${cmd} --help says more)`, 2);
  }
  if (values.port !== undefined && !/^\d{1,5}$/.test(String(values.port))) fail(`--port must be a number from 0 to 65535, not ${JSON.stringify(values.port)}`, 2);
  if (values.port !== undefined && Number(values.port) > 65535) fail(`--port must be a number from 0 to 65535, not ${values.port}`, 2);
  if (values.url !== undefined) {
    const problem = urlProblem(String(values.url));
    if (problem) fail(problem, 2);
  }

  switch (cmd) {
    case "version":
      return versionCommand(values, dataDir);
    case "check-config": {
      // Without FILE, the file start reads without --config ($SWITCHYARD_HOME/config.yaml, else
      // ~/.switchyard/config.yaml), named first; it was a usage error.
      let file = sub ?? (values.config as string | undefined);
      if (!file) {
        const { defaultConfigPath } = await import("./config/load.ts");
        file = defaultConfigPath();
        out(`checking ${visible(file)}, the file switchyard start reads without --config (switchyard check-config FILE checks another)`);
        if (!existsSync(file)) {
          out(`${visible(file)}: not found; switchyard start without --config runs on the built-in default then (its API-key variables and subscription logins), so there is no file to check`);
          process.exit(0);
        }
      }
      const { checkConfig } = await import("./config/check.ts");
      const r = checkConfig(file);
      for (const l of r.lines) out(visible(l)); // one line each: a path or value holding a line break cannot print one of its own
      process.exit(r.ok ? 0 : 1);
    }
    case "start":
      return start(values, dataDir);
    case "stop": {
      const { DEFAULT_STOP_TIMEOUT_S, stopCommand } = await import("./cli/stop.ts");
      const t = values.timeout === undefined ? DEFAULT_STOP_TIMEOUT_S : Number(values.timeout);
      if (!(/^\d+(\.\d+)?$/.test(String(values.timeout ?? "0")) && t > 0)) fail(`--timeout must be a number of seconds above 0, not ${JSON.stringify(values.timeout)}`, 2);
      return stopCommand(resolve(dataDir), t, values.force === true, { out, fail, kill: (pid, signal) => process.kill(pid, signal), sleep: (ms) => Bun.sleep(ms), now: () => Date.now() });
    }
    case "keys": {
      const { keysCommand } = await import("./cli/keys-command.ts");
      return keysCommand(sub, arg, values, dataDir);
    }
    case "usage": {
      const { usageLines, usageOptionProblem } = await import("./cli/usage-table.ts");
      const problem = usageOptionProblem(values);
      if (problem) fail(problem, 2);
      const q = new URLSearchParams({ since: String(values.since ?? "24h"), by: String(values.by ?? "model") });
      const r = (await admin(values, dataDir, "GET", `/usage?${q}`)) as { rows: Array<Record<string, unknown>>; cost?: CostSplit };
      // SPEC P-5: the providers' quota windows per account next to the token usage.
      const quota = (await admin(values, dataDir, "GET", "/quota")) as { accounts: Array<{ id: string; windows: Array<Record<string, unknown>> }> };
      if (values.json) return out(JSON.stringify({ ...r, quota: quota.accounts.filter((a) => a.windows.length > 0) }, null, 2));
      for (const l of usageLines(r.rows, (values.by ?? "model") as UsageGrouping, table, String(values.since ?? "24h"), r.cost)) out(l);
      const windows = quota.accounts.flatMap((a) => a.windows.map((w) => [a.id, w.window, w.model === "*" ? "all" : w.model, w.remainingPercent !== undefined ? `${w.remainingPercent} %` : "-", w.resetAt ? new Date(Number(w.resetAt)).toISOString() : "-"]));
      if (windows.length > 0) {
        out("");
        out(table(["account", "quota window", "models", "left", "resets"], windows));
      }
      return;
    }
    case "calls": {
      if (sub === "inspect") {
        const { inspectCommand } = await import("./cli/calls.ts");
        return inspectCommand({ id: arg, bodies: values.bodies === true, json: values.json === true }, (method, path, body, opts) => admin(values, dataDir, method, path, body, opts), { out, fail });
      }
      if (sub && sub !== "list") fail("usage: switchyard calls list | calls inspect ROUTE_ID", 2);
      // a usage error said before the instance is asked, as usage's --by and --since (the admin API's 400 was exit 1)
      if (values.limit !== undefined && !(/^\d{1,4}$/.test(String(values.limit)) && Number(values.limit) >= 1 && Number(values.limit) <= 1000)) {
        fail(`--limit must be a whole number from 1 to 1000, not ${JSON.stringify(values.limit)}`, 2);
      }
      const r = (await admin(values, dataDir, "GET", `/calls?limit=${encodeURIComponent(String(values.limit ?? 20))}`)) as { calls: Array<Record<string, unknown>> };
      if (values.json) return out(JSON.stringify(r, null, 2));
      if (r.calls.length === 0) return out("no calls yet: point a client at this gateway (switchyard setup claude-code|codex|gemini does it for those CLIs); each request is listed here once it finishes");
      // the instance column: which of several instances on one store served each call (newuser12a G11);
      // transport: http, websocket (Codex's Responses WebSocket) or unknown (recorded before it was kept);
      // its cost ("unpriced", "$0.024 + unpriced" as usage writes them); web_searches when a listed call had some
      const { callsTable } = await import("./cli/calls.ts");
      out(callsTable(r.calls, table));
      return;
    }
    case "route": {
      const { routeCommand } = await import("./cli/routing.ts");
      return routeCommand(
        { model: sub, bodyFile: values.body as string | undefined, format: values.format as string | undefined, headers: values.header as string[] | undefined, json: values.json === true },
        (method, path, body) => admin(values, dataDir, method, path, body),
        { out, fail },
      );
    }
    case "login": {
      const { loginCommand, openBrowser } = await import("./cli/login.ts");
      return loginCommand(
        sub,
        { account: values.account as string | undefined, provider: values.provider as string | undefined, priority: values.priority as string | undefined, noBrowser: values["no-browser"] === true },
        (method, path, body) => admin(values, dataDir, method, path, body),
        { out, fail, err: (line) => process.stderr.write(printable(line) + "\n"), ask: async (q) => prompt(q) ?? "", open: openBrowser },
      );
    }
    case "import": {
      const { importCommand } = await import("./cli/import.ts");
      return importCommand(
        sub,
        { from: values.from as string | undefined, account: values.account as string | undefined, provider: values.provider as string | undefined, priority: values.priority as string | undefined },
        (method, path, body) => admin(values, dataDir, method, path, body),
        { out, fail },
      );
    }
    case "service": {
      const { realServiceHost, serviceCommand } = await import("./cli/service.ts");
      return serviceCommand(
        sub,
        { config: values.config as string | undefined, dataDir, host: values.host as string | undefined, port: values.port as string | undefined },
        realServiceHost(),
        { out, fail },
      );
    }
    case "setup": {
      const cli = SETUP_CLIS.find((c) => c === sub);
      if (cli === undefined) {
        const { setupOther } = await import("./cli/setup-other.ts");
        return setupOther(sub, values, dataDir, { out, fail });
      }
      const { setupClientKey, setupCommand, undoCommand } = await import("./cli/setup-command.ts");
      if (values.undo) {
        const extra = (["model", "utility-model", "client-key", "key", "codex-bin", "url"] as const).filter((o) => values[o] !== undefined);
        if (extra.length > 0) fail(`setup --undo takes only --dry-run: it puts back ${sub}'s files from what setup recorded beside them and asks no gateway (${extra.map((o) => `--${o}`).join(", ")} given)`, 2);
        return undoCommand(cli, values["dry-run"] === true, { out, fail });
      }
      let key: string;
      try {
        key = setupClientKey(values["client-key"] as string | undefined, values.key as string | undefined);
      } catch (e) {
        fail((e as Error).message, 2);
      }
      const url = instanceUrl(values, dataDir);
      const ephemeralPort = values.url === undefined && instanceOnEphemeralPort(dataDir);
      if (values["utility-model"] !== undefined && sub !== "gemini") fail(`--utility-model is for setup gemini (Gemini CLI's utility models); ${sub} has no such setting`, 2);
      const opts = { url, dataDir, key, model: values.model as string | undefined, utilityModel: values["utility-model"] as string | undefined, dryRun: values["dry-run"] === true, codexBin: values["codex-bin"] as string | undefined, ephemeralPort };
      return setupCommand(cli, opts, { out, fail, notAnswering: (u) => notAnswering(values, dataDir, u) });
    }
    case "reload": {
      // --json: a refused file is a JSON object on stdout too ({ok: false, status, code, message, errors}), exit 1
      const refused = (status: number, data: unknown) => {
        const e = (data as { error: { message?: string; code?: string; issues?: unknown[] } }).error;
        out(JSON.stringify({ ok: false, status, code: e.code, message: e.message, errors: e.issues ?? [] }, null, 2));
        process.exit(1);
      };
      const r = await admin(values, dataDir, "POST", "/config/reload", undefined, values.json ? { refused } : undefined);
      if (values.json) return out(JSON.stringify({ ok: true, ...(r as object) }, null, 2));
      const { reloadLines } = await import("./cli/reload.ts");
      for (const l of reloadLines(r as ReloadAnswer)) out(l);
      return;
    }
    case "accounts": {
      const { accountsCommand } = await import("./cli/routing.ts");
      return accountsCommand(sub, { json: values.json === true, id: arg, model: positionals[3] }, (method, path, body) => admin(values, dataDir, method, path, body), { out, fail });
    }
    default:
      fail([unknownCommand(cmd), "", ...USAGE.split("\n")], 2);
  }
}

async function start(values: Record<string, unknown>, dataDir: string): Promise<void> {
  // The gateway (and everything it loads) is imported only by `start`: the other commands are thin
  // admin API clients and start in a fraction of the time without it.
  const { startApp } = await import("./app.ts");
  const { startFailedLine } = await import("./log-lines.ts");
  const { stopOnSignals } = await import("./stop-signals.ts");
  // A start that fails: one JSON line on stderr, where the start's other lines (`switchyard listening`,
  // `stopped`) go, for a supervisor or collector that reads JSON lines, then the same text for people
  // (a terminal) as before (try22 P9).
  const failed: (lines: string | string[]) => never = (lines) => {
    try {
      writeSync(2, startFailedLine(typeof lines === "string" ? lines : lines.join("\n"), Date.now()) + "\n");
    } catch {
      // stderr closed: nothing can say it
    }
    fail(lines);
  };
  let app;
  try {
    app = await startApp({
      configPath: values.config as string | undefined,
      host: values.host as string | undefined,
      port: values.port !== undefined ? Number(values.port) : undefined,
      dataDir,
      database: values.database as string | undefined,
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      // The file first (the default one may not be the file the user had in mind), then each problem
      // at its path in it; a problem of the whole file (unreadable, not YAML) is its message alone.
      const file = e.file ?? (values.config as string | undefined) ?? "the configuration";
      const issues = e.issues.map((i) => `  ${i.path === ROOT_PATH ? i.message : issueText(i)}`);
      failed([`switchyard did not start: the config file ${file} cannot be used (switchyard check-config ${file} checks it again):`, ...issues]);
    }
    const msg = e instanceof Error ? e.message : String(e);
    failed(
      /EADDRINUSE|address already in use|Failed to start server/i.test(msg)
        ? `cannot listen: ${msg} Stop the program that holds the port, or choose another with --port P (or server.port in the config file).`
        : `switchyard failed to start: ${msg}`,
    );
  }
  // The signal handlers go in before "listening" is written: a supervisor (or a test) that sends
  // SIGTERM the moment it reads that line must get the graceful stop, not Bun's default exit (143).
  stopOnSignals(app);
  const cfg = app.config();
  await app.flushLog(); // the start's lines on stdout (a store upgrade's warning) before "listening"
  process.stderr.write(
    JSON.stringify({ level: "info", time: Date.now(), msg: "switchyard listening", url: app.url, config: cfg.source.path ?? "(built-in default)", dataDir: resolve(dataDir) }) + "\n",
  );
  // SPEC D-4: Bun reads BUN_CONFIG_MAX_HTTP_REQUESTS once, when the process starts (setting it in
  // process.env here is too late: measured, docs/performance.md); scripts/start and the service unit set it.
  const cap = Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS ?? 256);
  if (!(cap >= 1024)) {
    process.stderr.write(
      JSON.stringify({ level: "warn", time: Date.now(), msg: `at most ${cap} concurrent upstream requests: start switchyard with BUN_CONFIG_MAX_HTTP_REQUESTS=4096 in its environment (scripts/start and the service unit do)` }) + "\n",
    );
  }
}

if (import.meta.main) {
  // `switchyard … | head` closes the pipe early: that is not an error worth a stack trace.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  main(process.argv.slice(2)).catch((e) => fail(`switchyard: ${e instanceof Error ? e.message : String(e)}`));
}
