/**
 * The settings a running instance reads only when it starts (SPEC 2.3's hot reload does not reach
 * them): the address it listens on (`server.host`, `server.port`) and its store (`server.database`).
 * A reload that changes one puts the rest of the file in force and says which of these wait for a
 * restart (`POST /admin/api/config/reload`'s `restartNeeded`, `switchyard reload`, the log).
 * Everything else in the file applies from the next request (`server.max_body_bytes` on an open
 * Responses WebSocket as src/http/socket-frame-limit.ts can, `keep_alive_timeout_ms` from each
 * connection's next request).
 */
import type { RuntimeConfig } from "./types.ts";

/** What an instance started with that only a restart changes ({@link restartNeeded}). */
export interface StartedWith {
  /** The configuration in force when it started (its `server` block is the file's then). */
  config: RuntimeConfig;
  /** The address it listens on (`http://127.0.0.1:20128`). */
  url: string;
  /** Given on the command line (`start --host`, `--port`, `--database`), which wins over the file. */
  flags: { host: boolean; port: boolean; database: boolean };
}

/** A changed setting that takes effect only when the instance restarts: its path in the file and what holds until then. */
export interface RestartNeeded {
  /** `server.host`, `server.port` or `server.database`. */
  path: string;
  /** One sentence for a person: the new value where it is no secret, and what the instance keeps meanwhile. */
  message: string;
}

/**
 * The start-only settings whose value in `next` differs from the one the instance started with,
 * changed by this reload or an earlier one (empty when none): each one's path and what holds until
 * a restart. A value given on the command line wins over the file's at the next start too, and the
 * message says so. `server.database` is a secret: its value is never written.
 */
export function restartNeeded(next: RuntimeConfig, started: StartedWith): RestartNeeded[] {
  const was = started.config;
  const out: RestartNeeded[] = [];
  const address = (path: "server.host" | "server.port", value: string, flag: boolean, option: string) => {
    const message = flag
      ? `${path} is now ${value} in the file, but this instance was started with ${option}, which wins over the file; it listens on ${started.url}`
      : `${path} changed to ${value}: it takes effect when switchyard is restarted; until then it listens on ${started.url}`;
    out.push({ path, message });
  };
  if (next.server.host !== was.server.host) address("server.host", next.server.host, started.flags.host, "--host");
  if (next.server.port !== was.server.port) address("server.port", String(next.server.port), started.flags.port, "--port");
  if ((next.server.database ?? "") !== (was.server.database ?? "")) {
    const store = was.server.database || started.flags.database ? "the PostgreSQL database it started with" : "its SQLite database in the data directory";
    out.push({
      path: "server.database",
      message: started.flags.database
        ? `server.database changed in the file, but this instance was started with --database, which wins over the file; it uses ${store}`
        : `server.database changed: it takes effect when switchyard is restarted; until then this instance uses ${store}`,
    });
  }
  return out;
}
