/**
 * Reading valibot's validation issues for a client-facing message (SPEC G-4). Pure, no I/O.
 */

/** The part of a valibot issue these helpers read: its path and, for a union, each option's issues. */
export interface NestedIssue {
  path?: readonly unknown[];
  issues?: readonly NestedIssue[];
}

/**
 * The most specific issue under `issue`: while it is a union's issue one of whose options failed
 * inside the value (a non-empty path, relative to the union's value as valibot reports it), the
 * deepest such option's issue with the full path. "content: Expected (string | Array) but received
 * Array" becomes "content.0.image_url: Expected string but received 5". An issue whose options all
 * failed on the value itself is returned as it is.
 */
export function specificIssue<I extends NestedIssue>(issue: I): I {
  let current = issue;
  for (;;) {
    let deepest: I | undefined;
    for (const s of (current.issues ?? []) as readonly I[]) if ((s.path?.length ?? 0) > (deepest?.path?.length ?? 0)) deepest = s;
    if (!deepest) return current;
    current = { ...deepest, path: [...(current.path ?? []), ...(deepest.path ?? [])] };
  }
}
