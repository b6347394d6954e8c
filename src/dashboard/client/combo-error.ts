/** The Routing page's "New combo" error line, from the admin API's refusal. */

/**
 * A refused combo's message: the field the API names (an `ApiError`'s `param`, e.g.
 * `targets[0].model`), then its message once — the API's message may start with the field already
 * (try18 D14: "targets[0].model: targets[0].model: unknown provider …"), which is dropped as the alias
 * form's `aliasErrorText` does. An error without a field: its message. (No import of api.ts, which
 * reads the page: tests run this outside a browser.)
 */
export function comboErrorText(e: unknown): string {
  const param = (e as { param?: unknown }).param;
  const message = (e as Error).message;
  if (!(e instanceof Error) || typeof param !== "string" || !param) return message;
  return `${param}: ${message.startsWith(`${param}: `) ? message.slice(param.length + 2) : message}`;
}
