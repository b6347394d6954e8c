/**
 * What follows every new configuration (a file change, SIGHUP, `POST /admin/api/config/reload`, a change
 * through the admin API; SPEC 2.3, 9.3): the accounts take it at once, the re-read of a file is logged
 * and published (`config_reloaded`, SPEC 9.4) with the settings that wait for a restart, open Routing
 * pages are told (`routing_changed`), warnings and left-out stored objects are logged, and the Responses
 * WebSocket's frame limit follows `server.max_body_bytes` where it can.
 */
import type { AccountList } from "./accounts/account-list.ts";
import type { LiveConfig } from "./config/live.ts";
import type { ConfigChanges } from "./config/diff.ts";
import { restartNeeded, type StartedWith } from "./config/restart-only.ts";
import type { RuntimeConfig } from "./config/types.ts";
import type { EventBus } from "./events/bus.ts";
import { publishReloadAccepted } from "./events/config-reloaded.ts";
import type { SocketFrameLimit } from "./http/socket-frame-limit.ts";
import type { Clock } from "../pipeline/ports.ts";

/** What {@link configApplied} needs of the running instance. */
export interface ConfigAppliedDeps {
  accountList: AccountList;
  refreshAccounts: () => Promise<unknown>;
  /** What the instance started with (undefined before it listens): what a reload cannot change. */
  startedWith: () => StartedWith | undefined;
  live: LiveConfig;
  bus: EventBus;
  clock: Clock;
  log: (line: string) => void;
  /** Logs a configuration's non-fatal remarks. */
  logConfigWarnings: (c: RuntimeConfig) => void;
  frameLimit: SocketFrameLimit;
}

/** The handler of a configuration applied (see the module comment): `(next, prev, changes, why)`. */
export function configApplied(d: ConfigAppliedDeps): (next: RuntimeConfig, prev: RuntimeConfig, changes: ConfigChanges, why: "file" | "stored") => void {
  const { bus, clock, log, frameLimit } = d;
  return (next, prev, changes, why) => {
    // The new file's accounts serve the next request: the registry takes them with the configuration
    // that routes to them, not after the store's re-read (on PostgreSQL a few round trips, during which
    // a provider added with its account was "No account is configured"); that re-read follows. A store
    // that is away or closed (an outage, shutdown) leaves it to the periodic re-read.
    d.accountList.compose();
    d.refreshAccounts().catch(() => {});
    // A re-read of the file is always logged (SIGHUP with the same file too), with the changed settings
    // that wait for a restart (src/config/restart-only.ts); a stored change when it changed something.
    const startedWith = d.startedWith();
    const waiting = why === "file" && startedWith ? restartNeeded(next, startedWith) : [];
    if (why === "file") log(JSON.stringify({ level: "info", time: clock.now(), msg: "config reloaded", path: next.source.path, changes, ...(waiting.length > 0 ? { restartNeeded: waiting.map((w) => w.path) } : {}) }));
    if (why === "file") publishReloadAccepted(bus, clock.now(), next.source.path, changes, waiting, next.warnings, d.live.fileChangeBefore(changes)); // SPEC 9.4: open dashboards show it
    // each one said once, by the re-read that changed it
    for (const w of waiting) if (changes.server?.includes(w.path.slice("server.".length))) log(JSON.stringify({ level: "warn", time: clock.now(), msg: w.message, path: w.path }));
    if (Object.keys(changes).length === 0) return;
    // SPEC 9.4: open Routing pages follow combos, aliases, providers and settings changed by anyone.
    const { combos, aliases, providers, settings } = changes;
    if ((combos || aliases || providers || settings) && bus.wants("routing_changed")) bus.publish({ type: "routing_changed", at: clock.now(), source: why, combos, aliases, providers, settings });
    if (why === "stored") log(JSON.stringify({ level: "info", time: clock.now(), msg: "config changed through the admin API", changes }));
    d.logConfigWarnings(next);
    for (const r of next.stored?.rejected ?? []) {
      if (r.why === "invalid") log(JSON.stringify({ level: "warn", time: clock.now(), msg: `stored ${r.kind} left out: ${r.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, name: r.name }));
    }
    if (next.server.maxBodyBytes !== prev.server.maxBodyBytes && !frameLimit.follow(next.server.maxBodyBytes) && next.server.maxBodyBytes > frameLimit.bytes) {
      const msg = `server.max_body_bytes is now above the Responses WebSocket's frame limit, which could not be changed: over the WebSocket a frame larger than ${frameLimit.bytes} bytes still closes the socket (1009) until the gateway is restarted; HTTP takes the new limit at once`;
      log(JSON.stringify({ level: "warn", time: clock.now(), msg, maxBodyBytes: next.server.maxBodyBytes, socketFrameLimit: frameLimit.bytes }));
    }
  };
}
