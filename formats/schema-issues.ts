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

/** A valibot issue's path item: the key of the object member or array element that failed. */
interface PathItem {
  key?: unknown;
}

/**
 * The path of a valibot issue written as OpenAI writes `error.param` and the field in its messages:
 * object members joined by dots, array indexes in brackets after their array, without a dot
 * (`messages[1].content[0].image_url`, `input[3].call_id`, `tools[0].function`). OpenAI's own 400s read
 * so ("Invalid value: 'robot'…", param `messages[0].role`; Responses `input[1]`); only its older
 * tool-order check writes `messages.[1].role`. `prefix` is the path of the value that was checked
 * (`input[3]`), empty for the whole body. Undefined when the issue has no path and no prefix, or a key is
 * neither a string nor a number.
 */
export function openAiParam(issue: { path?: readonly unknown[] }, prefix = ""): string | undefined {
  let out = prefix;
  for (const item of issue.path ?? []) {
    const key = (item as PathItem).key;
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string") out += out ? `.${key}` : key;
    else return undefined;
  }
  return out || undefined;
}
