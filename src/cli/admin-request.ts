/**
 * One call of a running instance's admin API (`/admin/api…`, SPEC 9.3) for the CLI: the request with
 * the admin token as a bearer key, and the answer's JSON (or its text when it is not JSON). Used by
 * the commands that talk to the instance (src/main.ts `admin`) and by `setup`'s questions to it
 * (src/cli/setup-command.ts); each says in its own words what a failure means.
 */

/** An answer of the admin API: its HTTP status and its JSON body (or the body's text when it is not JSON). */
export interface AdminAnswer {
  status: number;
  data: unknown;
}

/**
 * How long the CLI waits for the admin API's answer, ms. The instance bounds its own waits on the
 * database (10 s, then a 503), so a longer silence means it accepted the connection and is stuck or
 * overloaded: said so ({@link NoAnswer}), not taken for "no running instance".
 */
export const ADMIN_ANSWER_MS = 60_000;

/** The instance accepted the connection but sent no answer within `ms` (askAdmin's timeout). */
export class NoAnswer {
  constructor(readonly ms: number) {}
}

/** The line for a {@link NoAnswer} from the instance at `url`. */
export function noAnswerLine(url: string, ms: number): string {
  return `the switchyard instance at ${url} accepted the connection but did not answer within ${Math.round(ms / 1000)} s (an instance that is stuck or overloaded, or that waits on something: its log says what); try again later`;
}

/**
 * Calls `method` `path` (below `/admin/api`) at `url` (a trailing slash is dropped), with `token` as
 * `Authorization: Bearer` when given and `body` as JSON when given. Resolves to undefined when nothing
 * answers at `url` (refused, unreachable), to a {@link NoAnswer} when the connection was taken but no
 * answer came within `answerMs` (default {@link ADMIN_ANSWER_MS}), else to the answer whatever its status.
 */
export async function askAdmin(url: string, token: string | undefined, method: string, path: string, body?: unknown, answerMs = ADMIN_ANSWER_MS): Promise<AdminAnswer | NoAnswer | undefined> {
  let res: Response;
  let text: string;
  const signal = AbortSignal.timeout(answerMs);
  try {
    res = await fetch(`${url.replace(/\/+$/, "")}/admin/api${path}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch {
    // connected and then silent: it runs but does not answer (not "nothing answers")
    return signal.aborted ? new NoAnswer(answerMs) : undefined;
  }
  try {
    text = await res.text();
  } catch (err) {
    if (signal.aborted) return new NoAnswer(answerMs);
    throw err;
  }
  let data: unknown = text;
  try {
    data = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, data };
}
