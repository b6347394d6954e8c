/**
 * The configuration a running instance uses (SPEC 2.3, 9.3): the file's text as last read, composed
 * with the combos, aliases and settings stored through the admin API (compose.ts), swapped in one
 * assignment so a request sees either the old or the new configuration, never a mix.
 *
 * - The file is re-read on change, on SIGHUP (watch.ts) and by `POST /admin/api/config/reload`
 *   ({@link LiveConfig.reloadFile}); an invalid file is rejected and the running configuration stays.
 * - A change through the admin API writes the store, then {@link LiveConfig.refreshStored} re-reads the
 *   stored objects and recomposes (the next request uses it); another instance's announcement of a
 *   change (SPEC D-2) and the periodic account re-read (every 10 s, the safety net) call it too.
 */
import { existsSync } from "node:fs";
import type { RoutingObjectStore } from "../store/routing-objects.ts";
import { composeConfig, readConfigBase, type ConfigBase, type StoredObjects } from "./compose.ts";
import { configChanges, type ConfigChanges } from "./diff.ts";
import type { FileChange } from "./describe-changes.ts";
import { ConfigError } from "./errors.ts";
import { defaultConfigPath } from "./load.ts";
import type { Env } from "./secrets.ts";
import type { RuntimeConfig } from "./types.ts";

/** Options of {@link LiveConfig}. */
/**
 * Why an instance started without a config file does not take up one written later, in the words the
 * start remark (src/start-remarks.ts) and {@link noConfigFileToReload} give: only the file an instance
 * starts with is read and watched, because some of a file's settings are read only at start (the
 * address, `server.host` / `server.port`, and the store, `server.database`: a file naming a PostgreSQL
 * database cannot move a running instance off its SQLite one), so a file taken up at run time would not
 * run as a start with it does.
 */
export const ONLY_THE_STARTING_FILE =
  "switchyard reads and watches only the config file it started with, as some of a file's settings (server.host, server.port, server.database) take effect only at start";

/**
 * What a reload of an instance on the built-in default configuration answers (no file: `POST
 * /admin/api/config/reload`'s 409, `switchyard reload`) and what SIGHUP logs then (the process keeps
 * running): what to do, restart, and why ({@link ONLY_THE_STARTING_FILE}). `defaultPath` is the file
 * `switchyard start` would have read (load.ts defaultConfigPath, the start remark's); `written`,
 * whether it exists now (written after the start): then the sentence says that one is there.
 */
export function noConfigFileToReload(defaultPath: string, written: boolean): string {
  const restart = "restart switchyard (switchyard stop, then switchyard start) to use it";
  return written
    ? `This instance started on the built-in default configuration: ${defaultPath} was written after it started and is not read until then; ${restart}. ${ONLY_THE_STARTING_FILE}.`
    : `This instance started on the built-in default configuration: there is no config file to reload. Write one at ${defaultPath} (or pass --config FILE to start) and ${restart}. ${ONLY_THE_STARTING_FILE}.`;
}

export interface LiveConfigOptions {
  /** The file's path; absent when running on the built-in default. */
  path?: string;
  env: Env;
  /** Whether `--database` was given (load.ts `ParseOptions.databaseFlag`). */
  databaseFlag?: boolean;
  store: RoutingObjectStore;
  now: () => number;
  /** The configuration loaded from the file alone at start (already validated). */
  initial: RuntimeConfig;
  /**
   * Called with every new configuration after it is in force, and why: `file` (the file was re-read)
   * or `stored` (objects stored through the admin API changed). Must not throw.
   */
  applied: (next: RuntimeConfig, prev: RuntimeConfig, changes: ConfigChanges, why: "file" | "stored") => void;
  /** Called when {@link LiveConfig.reloadFile} refuses the file (the running configuration stays). Must not throw. */
  rejected?: (error: ConfigError) => void;
}

/** The result of re-reading the file. */
export type ReloadResult = { ok: true; changes: ConfigChanges; warnings: RuntimeConfig["warnings"] } | { ok: false; error: ConfigError };

const EMPTY: StoredObjects = { combos: [], aliases: [], settings: {} };

/** The running configuration and how it changes. */
export class LiveConfig {
  private cfg: RuntimeConfig;
  private base: ConfigBase;
  private stored: StoredObjects = EMPTY;
  private lastChange: FileChange | undefined;

  constructor(private readonly opts: LiveConfigOptions) {
    this.cfg = opts.initial;
    this.base = opts.path ? readConfigBase(opts.path) : { text: "" };
  }

  /** The configuration in force. */
  current(): RuntimeConfig {
    return this.cfg;
  }

  /** The stored objects as last read. */
  storedObjects(): StoredObjects {
    return this.stored;
  }

  /** The file's text as last read ("" without a file). */
  fileText(): string {
    return this.base.text;
  }

  /**
   * What a re-read that answered `changes` reports beside them: for one that changed nothing, the last
   * re-read of the file (by the watcher, SIGHUP or a reload) that did, so "nothing changed" can say when
   * and what (describe-changes.ts describeReload); otherwise nothing. The admin API's reload answer and
   * the `config_reloaded` event use it.
   */
  fileChangeBefore(changes: ConfigChanges): FileChange | undefined {
    return Object.keys(changes).length === 0 ? this.lastChange : undefined;
  }

  /**
   * Why there is nothing to reload on the built-in default ({@link noConfigFileToReload}), naming the
   * default config path of this instance's environment and whether a file is there now.
   */
  noFileToReload(): string {
    const at = defaultConfigPath(this.opts.env);
    return noConfigFileToReload(at, existsSync(at));
  }

  /** The file's absolute path, when there is a file. */
  get path(): string | undefined {
    return this.base.path;
  }

  /** Reads the stored objects and composes them with the file (at start). The file was valid a moment ago. */
  async init(): Promise<void> {
    this.stored = await this.readStored();
    this.set(composeConfig(this.base, this.stored, this.opts.env, this.opts.now, this.opts.databaseFlag), "stored");
  }

  /**
   * The configuration the file and `stored` would give, without changing anything (used to validate
   * an object before it is stored).
   * @throws ConfigError when the file itself is invalid.
   */
  composeWith(stored: StoredObjects): RuntimeConfig {
    return composeConfig(this.base, stored, this.opts.env, this.opts.now, this.opts.databaseFlag);
  }

  /** Re-reads the stored objects and puts the recomposed configuration in force. */
  async refreshStored(): Promise<ConfigChanges> {
    const stored = await this.readStored();
    const same = JSON.stringify(stored) === JSON.stringify(this.stored);
    this.stored = stored;
    if (same) return {};
    return this.set(composeConfig(this.base, this.stored, this.opts.env, this.opts.now, this.opts.databaseFlag), "stored");
  }

  /** Composes `text` (the file's new content, as the watcher read it) with the stored objects. */
  composeFile(text: string): RuntimeConfig {
    try {
      return composeConfig({ path: this.base.path, text }, this.stored, this.opts.env, this.opts.now, this.opts.databaseFlag);
    } catch (e) {
      throw e instanceof ConfigError ? environmentFixed(e) : e;
    }
  }

  /** Puts a configuration composed from new file text in force (the watcher's onReload). */
  acceptFile(next: RuntimeConfig, text: string): ConfigChanges {
    this.base = { path: this.base.path, text };
    return this.set(next, "file");
  }

  /**
   * Re-reads the file now (`POST /config/reload`) and says what changed or why it was rejected. A file
   * emptied since the running one was read is rejected as watch.ts rejects it on a change or SIGHUP (an
   * empty file would be a valid config with no providers or accounts).
   */
  reloadFile(): ReloadResult {
    if (!this.base.path) return { ok: false, error: new ConfigError([{ path: "(root)", message: "this instance runs on the built-in default configuration: there is no file to reload" }]) };
    const refused = (error: ConfigError): ReloadResult => {
      this.opts.rejected?.(error);
      return { ok: false, error };
    };
    try {
      const base = readConfigBase(this.base.path);
      if (base.text.trim() === "" && this.base.text.trim() !== "") return refused(new ConfigError([{ path: "(root)", message: "the config file is empty; ignored" }], base.path));
      const next = composeConfig(base, this.stored, this.opts.env, this.opts.now, this.opts.databaseFlag);
      this.base = base;
      return { ok: true, changes: this.set(next, "file"), warnings: next.warnings };
    } catch (e) {
      if (e instanceof ConfigError) return refused(environmentFixed(e));
      throw e;
    }
  }

  private set(next: RuntimeConfig, why: "file" | "stored"): ConfigChanges {
    const prev = this.cfg;
    const changes = configChanges(prev, next);
    this.cfg = next;
    if (why === "file" && Object.keys(changes).length > 0) this.lastChange = { at: this.opts.now(), changed: changes };
    this.opts.applied(next, prev, changes, why);
    return changes;
  }

  private async readStored(): Promise<StoredObjects> {
    const [combos, aliases, settings] = await Promise.all([this.opts.store.listCombos(), this.opts.store.listAliases(), this.opts.store.getSettings()]);
    return { combos, aliases, settings };
  }
}

/**
 * A reload's error for an `env:` secret whose variable is not set (or empty) says what to do: the
 * running process's environment is the one it started with, which a reload cannot change (an `export`
 * in a shell afterwards does not reach it), so restart switchyard with the variable set, or give the
 * secret as `file:PATH`, which every reload reads again. Other issues are kept as they are.
 */
function environmentFixed(e: ConfigError): ConfigError {
  let changed = false;
  const issues = e.issues.map((i) => {
    const m = /^environment variable (\S+) is (?:not set|empty)$/.exec(i.message);
    if (!m) return i;
    changed = true;
    return { ...i, message: `${i.message} in this running switchyard, whose environment is the one it started with: a reload cannot change it; restart switchyard with ${m[1]} set, or give the secret as file:PATH (read again at every reload)` };
  });
  return changed ? new ConfigError(issues, e.file, e.cycles) : e;
}
