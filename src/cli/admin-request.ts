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
 * How long the CLI waits for the admin API's answer (its status and headers), and then at most between
 * two pieces of its body, ms. The instance bounds its own waits on the database (10 s, then a 503), so a
 * longer silence means it is stuck or overloaded: said so ({@link NoAnswer}), not taken for "no
 * running instance". A large reply that keeps coming is read to its end however long it takes.
 */
export const ADMIN_ANSWER_MS = 60_000;

/**
 * The admin API's answer did not come whole (askAdmin): no status within `ms` (`status` undefined), or
 * a status and then a body that stopped for `ms` or (`cut`: the error's message) ended with the
 * connection before it was complete.
 */
export class NoAnswer {
  constructor(
    readonly ms: number,
    readonly status?: number,
    readonly cut?: string,
  ) {}
}

/** The line for a {@link NoAnswer} from the instance at `url`. */
export function noAnswerLine(url: string, answer: NoAnswer): string {
  const s = Math.round(answer.ms / 1000);
  if (answer.status === undefined) {
    // connecting is in the bound too (a network that drops the connection): "accepted" is not known
    return `the switchyard instance at ${url} did not answer within ${s} s (an instance that is stuck or overloaded, or that waits on something: its log says what); try again later`;
  }
  if (answer.cut !== undefined) return `the switchyard instance at ${url} answered (HTTP ${answer.status}) but the connection closed before its reply was complete (${answer.cut}); try again`;
  return `the switchyard instance at ${url} answered (HTTP ${answer.status}) but its reply stopped coming for ${s} s before it was complete; try again later`;
}

/**
 * Calls `method` `path` (below `/admin/api`) at `url` (a trailing slash is dropped), with `token` as
 * `Authorization: Bearer` when given and `body` as JSON when given. Resolves to undefined when nothing
 * answers at `url` (refused, unreachable), to a {@link NoAnswer} when no status came within `answerMs`
 * (default {@link ADMIN_ANSWER_MS}) or the body then stopped for `answerMs` or was cut off, else to the
 * answer whatever its status.
 */
export async function askAdmin(url: string, token: string | undefined, method: string, path: string, body?: unknown, answerMs = ADMIN_ANSWER_MS): Promise<AdminAnswer | NoAnswer | undefined> {
  const abort = new AbortController();
  // one bound for the status, then one per piece of the body (restarted as each arrives)
  let timer = setTimeout(() => abort.abort(), answerMs);
  try {
    let res: Response;
    try {
      res = await fetch(`${url.replace(/\/+$/, "")}/admin/api${path}`, {
        method,
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: abort.signal,
      });
    } catch {
      // silent past the bound: it may run but does not answer (not "nothing answers")
      return abort.signal.aborted ? new NoAnswer(answerMs) : undefined;
    }
    // the body's first piece gets a bound of its own from the status, not what the status left of one
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), answerMs);
    let text = "";
    try {
      const decoder = new TextDecoder();
      for await (const piece of res.body ?? []) {
        clearTimeout(timer);
        timer = setTimeout(() => abort.abort(), answerMs);
        text += decoder.decode(piece, { stream: true });
      }
      text += decoder.decode();
    } catch (err) {
      return new NoAnswer(answerMs, res.status, abort.signal.aborted ? undefined : err instanceof Error ? err.message : String(err));
    }
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, data };
  } finally {
    clearTimeout(timer);
  }
}
