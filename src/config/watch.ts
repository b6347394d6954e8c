/**
 * Hot reload of the configuration file (SPEC 2.3): the file is re-read when it changes and on SIGHUP.
 * A valid new file is handed to `onReload`; an invalid one goes to `onError` and the caller keeps the
 * configuration it already has (nothing is swapped, no request in flight is affected).
 *
 * The watcher watches the file's *folder* (not the file), so editors that save by writing a temporary
 * file and renaming it over the original, or by deleting and recreating it, are followed. A path that
 * is a symlink is followed too: the folder of the file it resolves to is watched as well (try19 D8: an
 * edit of the target, e.g. in a dotfiles repo, went unseen), re-resolved after every event, since the
 * link may be repointed. Bursts of
 * events are debounced (default 200 ms). A change event whose content is byte-identical to the last
 * content handed out is ignored, except right after a rejected edit: then the file put back as it was
 * (the usual typo-then-fix cycle) is handed out again with `{ restored: true }`, so the caller can say
 * the rejection is over (try19 D2). SIGHUP and `reload()` always re-read (they also pick up changed
 * `env:`/`file:` secrets, which are not watched). Each re-read runs through `serialize` when given
 * (the running instance's admin change queues: src/follow-config-file.ts).
 */
import { type FSWatcher, readFileSync, realpathSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { ConfigError, ROOT_PATH } from "./errors.ts";
import { loadConfigFile } from "./load.ts";
import type { Env } from "./secrets.ts";
import type { RuntimeConfig } from "./types.ts";

/** Callbacks of {@link watchConfig}. Neither may throw; if one does, the error goes to `onError`. */
export interface WatchHandlers {
  /**
   * A new, valid configuration, and the file text it was built from. `info.restored`: the file is again
   * the one in force (same text) after the last re-read rejected an edit; nothing changed.
   */
  onReload(cfg: RuntimeConfig, text?: string, info?: { restored: boolean }): void;
  /** The new file is invalid or unreadable (a `ConfigError`), or watching failed. Keep the old config. */
  onError(err: unknown): void;
}

/** Options of {@link watchConfig}. */
export interface WatchOptions {
  /** Environment for `env:` secrets. Default `process.env`. */
  env?: Env;
  /** Quiet period after the last file event before re-reading, ms. Default 200. */
  debounceMs?: number;
  /** Re-read on SIGHUP. Default true. */
  sighup?: boolean;
  /**
   * Builds the configuration from the file's new text (default: the file alone, `loadConfigFile`);
   * the running instance composes it with the objects stored through the admin API (compose.ts).
   * @throws ConfigError for an invalid file.
   */
  load?: (text: string) => RuntimeConfig;
  /**
   * Runs each re-read (after an edit's quiet period, on SIGHUP, `reload()`): the file is read, built and
   * handed to `onReload` inside `reread`, when the caller runs it (default: at once). The running
   * instance runs it in the admin API's queues of configuration changes (src/follow-config-file.ts), so
   * that it waits for a change between its check and its write. Must run `reread` once, at most.
   */
  serialize?: (reread: () => void) => void;
}

/** Stops watching (idempotent). `reload()` re-reads now, as SIGHUP does (for the admin API's reload). */
export interface ConfigWatcher {
  (): void;
  reload(): void;
}

/**
 * Watches the configuration file at `path` and reports each new valid configuration to `onReload`
 * (invalid ones to `onError`). The first load is the caller's (`loadConfigFile`); this only reports
 * changes. Returns a function that stops watching (file watcher, timer and SIGHUP listener).
 */
export function watchConfig(path: string, handlers: WatchHandlers, opts: WatchOptions = {}): ConfigWatcher {
  const abs = resolve(path);
  const dir = dirname(abs);
  const name = basename(abs);
  const debounceMs = opts.debounceMs ?? 200;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastText: string | undefined;
  // The last re-read of the file's content was rejected (onError): the next good read is announced
  // even when it is the text already in force.
  let rejected = false;
  try {
    lastText = readFileSync(abs, "utf8");
  } catch {
    lastText = undefined;
  }

  const safe = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      try {
        handlers.onError(err);
      } catch {
        // A throwing onError must not kill the watcher.
      }
    }
  };

  const serialize = opts.serialize ?? ((reread: () => void) => reread());
  const reloadNow = (force: boolean) => serialize(() => reread(force));
  const reread = (force: boolean) => {
    if (stopped) return;
    followTarget();
    let text: string | undefined;
    try {
      text = readFileSync(abs, "utf8");
    } catch {
      text = undefined; // loadConfigFile below reports the read error as a ConfigError
    }
    const same = text !== undefined && text === lastText;
    if (!force && same && !rejected) return;
    if (text !== undefined && text.trim() === "" && lastText !== undefined && lastText.trim() !== "") {
      rejected = true;
      // An editor that truncates before writing, or a file emptied by mistake: an empty file would be a
      // valid config with no providers or accounts. Keep the running config; a real edit follows.
      safe(() => {
        throw new ConfigError([{ path: ROOT_PATH, message: "the config file is empty; ignored" }], abs);
      });
      return;
    }
    safe(() => {
      let cfg: RuntimeConfig;
      try {
        cfg = opts.load && text !== undefined ? opts.load(text) : loadConfigFile(abs, opts.env ?? process.env);
      } catch (err) {
        rejected = true;
        throw err;
      }
      const restored = rejected && same;
      rejected = false;
      lastText = text;
      handlers.onReload(cfg, text, restored ? { restored } : undefined);
    });
  };

  const schedule = () => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      reloadNow(false);
    }, debounceMs);
  };

  /** Watches `folder` for events on `file` (any event when the platform omits the name). */
  const watchFolder = (folder: string, file: string): FSWatcher | undefined => {
    try {
      const w = watch(folder, { persistent: false }, (_event, filename) => {
        if (filename == null || filename.toString() === file) schedule();
      });
      w.on("error", (err) => safe(() => handlers.onError(err)));
      return w;
    } catch (err) {
      safe(() => handlers.onError(err));
      return undefined;
    }
  };
  const watcher = watchFolder(dir, name);

  // The symlink's target (its real path), watched in its own folder while it differs from `abs`.
  let target: { path: string; watcher?: FSWatcher } | undefined;
  const followTarget = () => {
    if (stopped) return;
    let real: string;
    try {
      real = realpathSync(abs);
    } catch {
      return; // gone for now (a delete and recreate, a dangling link): keep what is watched
    }
    if (real === (target?.path ?? abs)) return;
    target?.watcher?.close();
    target = real === abs ? undefined : { path: real, watcher: watchFolder(dirname(real), basename(real)) };
  };
  followTarget();

  const onHup = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    reloadNow(true);
  };
  const sighup = opts.sighup ?? true;
  if (sighup) process.on("SIGHUP", onHup);

  const stop = (() => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    watcher?.close();
    target?.watcher?.close();
    if (sighup) process.off("SIGHUP", onHup);
  }) as ConfigWatcher;
  stop.reload = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    reloadNow(true);
  };
  return stop;
}
