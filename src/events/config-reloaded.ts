/**
 * The `config_reloaded` event (src/events/bus.ts; SPEC 2.3, 9.4): what each re-read of the config file
 * answered, for the dashboards that are open (the Routing page's Config file card), whoever triggered
 * it: a change of the file, SIGHUP, `POST /admin/api/config/reload`. Built only while someone listens.
 */
import { ConfigError, issueText } from "../config/errors.ts";
import type { ConfigReloadedEvent, EventBus, PathMessage } from "./bus.ts";

/**
 * Publishes a re-read that put the file in force: what changed, what waits for a restart, the warnings,
 * and `lastFileChange` when given (LiveConfig.fileChangeBefore: for a re-read that changed nothing, the last one that did).
 */
export function publishReloadAccepted(
  bus: EventBus,
  at: number,
  file: string | undefined,
  changed: ConfigReloadedEvent["changed"],
  restartNeeded: readonly PathMessage[],
  warnings: readonly PathMessage[],
  lastFileChange?: ConfigReloadedEvent["lastFileChange"],
): void {
  if (!bus.wants("config_reloaded")) return;
  const only = (l: readonly PathMessage[]) => l.map((x) => ({ path: x.path, message: x.message }));
  const last = lastFileChange ? { lastFileChange } : {};
  bus.publish({ type: "config_reloaded", at, file: file ?? "", changed, ...last, restartNeeded: only(restartNeeded), warnings: only(warnings) });
}

/**
 * Publishes a re-read that refused the file (the previous configuration stays): `err` is the loader's
 * {@link ConfigError} (its issues as `path (line N): message`, as the admin API's 400 says them) or any error.
 */
export function publishReloadRejected(bus: EventBus, at: number, file: string | undefined, err: unknown): void {
  if (!bus.wants("config_reloaded")) return;
  const error = err instanceof ConfigError ? err.issues.map((i) => issueText(i, file)).join("; ") : err instanceof Error ? err.message : String(err);
  bus.publish({ type: "config_reloaded", at, file: file ?? "", changed: {}, restartNeeded: [], warnings: [], error });
}
