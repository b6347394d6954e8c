/**
 * The request echo's members as JSON text (issue 17, docs/performance.md items 103 and 114): every
 * response object of a Responses reply repeats the request's `instructions`, tools and settings
 * (REFERENCE §3.2–3.3), and Codex resends its whole request, ~18 KB of tools included, on every turn.
 * The tools' text comes from the format-neutral memo of formats/write-body-json.ts (which also writes
 * every format's upstream body), so equal tool lists are written once across requests; the settings
 * that change from turn to turn (`previous_response_id`) are written each time.
 */
import { membersJson } from "../write-body-json.ts";

/**
 * The members of `JSON.stringify(echo)` (without its braces) followed by a comma, or "" for an echo
 * without members: the same text, with a non-empty `tools` array's JSON from the memo. `echo` is the
 * response echo of formats/openai-responses/response.ts `responseEcho` (plain JSON data).
 */
export function echoMembers(echo: Record<string, any>): string {
  const members = membersJson(echo);
  return members.length > 0 ? members + "," : "";
}
