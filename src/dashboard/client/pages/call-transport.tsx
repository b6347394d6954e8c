/**
 * How a call came, on the Calls page (try17's tryout): the list's badge, the call view's words and the
 * filter's choices. A call recorded before switchyard kept its transport (SQLite schema 17, PostgreSQL
 * schema 18, or by an instance of an earlier version on an upgraded shared store) reads as unknown,
 * never as HTTP.
 */
import { Pill } from "../components.tsx";
import type { CallRow } from "../types.ts";

/** The Transport filter's choices ("" = any), as `GET /admin/api/calls?transport=` takes them. */
export const TRANSPORTS = ["", "http", "websocket", "unknown"];

/** A call's transport in the call view's words (try17's tryout). */
export function transportText(t: CallRow["transport"]): string {
  if (t === "http") return "HTTP";
  if (t === "websocket") return "Codex's Responses WebSocket (the reply went back as JSON frames, one per event)";
  return "unknown (recorded before switchyard kept how a call came)";
}

/**
 * The list's transport marker: a WS badge for a call that came over Codex's Responses WebSocket, a
 * "via ?" one for a call recorded before switchyard kept it (not passed off as HTTP), none for HTTP.
 */
export function TransportBadge({ transport }: { transport: CallRow["transport"] }) {
  if (transport === "http") return null;
  return (
    <>
      {" "}
      <span class="transport-badge" data-transport={transport === "websocket" ? "websocket" : "unknown"}>
        {transport === "websocket" ? (
          <Pill tone="info" title="Came over Codex's Responses WebSocket">
            WS
          </Pill>
        ) : (
          <Pill tone="off" title="Transport unknown: recorded before switchyard kept how a call came (HTTP or WebSocket)">
            via ?
          </Pill>
        )}
      </span>
    </>
  );
}
