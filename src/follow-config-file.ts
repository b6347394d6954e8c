/**
 * Follows the configuration file (SPEC 2.3): each edit, and SIGHUP, re-reads it (src/config/watch.ts),
 * composed with the objects stored through the admin API; a valid one is applied (src/config/live.ts
 * `acceptFile`), an invalid one is logged and published as `config_reload_rejected` while the previous
 * configuration stays in force, and the file put back as it is in force after a rejected edit is said.
 * Each re-read runs in the admin API's change queues when given (`writer`), as `POST /config/reload` does.
 */
import type { Clock } from "../pipeline/ports.ts";
import { ConfigError, issueText } from "./config/errors.ts";
import type { LiveConfig } from "./config/live.ts";
import type { RuntimeConfig } from "./config/types.ts";
import { watchConfig, type ConfigWatcher } from "./config/watch.ts";
import { RELOAD_QUEUES, type ConfigWriter } from "./admin/config-writer.ts";
import type { EventBus } from "./events/bus.ts";
import { publishReloadRejected } from "./events/config-reloaded.ts";

/** What following the file needs of the running instance (src/app.ts). */
export interface ConfigFileFollow {
  /** The running configuration (its `source.path` names the file in log lines and events). */
  config: () => RuntimeConfig;
  live: LiveConfig;
  bus: EventBus;
  clock: Clock;
  log: (line: string) => void;
  /** Environment for the file's `env:` secrets. */
  env: Record<string, string | undefined>;
  /**
   * The admin API's queues of configuration changes (src/admin/config-writer.ts): each re-read, after an
   * edit or on SIGHUP, runs in {@link RELOAD_QUEUES} as `POST /config/reload` does, after the changes
   * handed in before it (a combo create between its check and its write) and before those after it.
   * Without it, re-reads run at once.
   */
  writer?: ConfigWriter;
}

/** Watches the file at `path` (see the module comment); the watcher stops it (idempotent). */
export function followConfigFile(path: string, d: ConfigFileFollow): ConfigWatcher {
  const { config, live, bus, clock, log, env, writer } = d;
  return watchConfig(path, {
    onReload: (next, text, info) => {
      // After a rejected edit, the file put back as it is in force is said (and the `config reloaded`
      // line and event that follow clear the dashboard's "rejected"), not passed over in silence.
      if (info?.restored) log(JSON.stringify({ level: "info", time: clock.now(), msg: "config file matches the running config again; the rejected edit is gone", path: config().source.path }));
      live.acceptFile(next, text ?? "");
    },
    onError: (err) => {
      const error = err instanceof ConfigError ? err.issues.map((i) => issueText(i, config().source.path)).join("; ") : err instanceof Error ? err.message : String(err);
      log(JSON.stringify({ level: "error", time: clock.now(), msg: "config reload rejected; the previous config stays in force", path: config().source.path, error }));
      publishReloadRejected(bus, clock.now(), config().source.path, err);
    },
  }, { env, load: (text) => live.composeFile(text), serialize: writer ? (reread) => void writer.run(RELOAD_QUEUES, reread).catch(() => {}) : undefined });
}
