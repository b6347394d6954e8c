/**
 * The dashboard's only door to data: the admin API (`/admin/api/…`, SPEC 9.3), same origin, with the
 * session cookie the browser sends by itself and the CSRF token of the page on every state change.
 */

import { reloadToSignIn } from "./session-ended.ts";

/** The CSRF token the server put into the page's `<meta name="csrf-token">`. */
export const csrfToken = (): string => document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? "";

/** An admin API error: the HTTP status and the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string | null,
    /** The answer's whole `error` object (its `code` and any route-specific members). */
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * Calls `/admin/api{path}`. JSON in and out. Throws {@link ApiError} for any non-2xx answer; a 401
 * means the session ended, so the page reloads into the login view.
 */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? "GET";
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") headers["x-csrf-token"] = csrfToken();
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`/admin/api${path}`, {
    method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: "same-origin",
  });
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const err = (data as { error?: { message?: string; param?: string | null } & Record<string, unknown> } | undefined)?.error;
    if (res.status === 401) reloadToSignIn("ended");
    throw new ApiError(res.status, err?.message ?? `${res.status} ${res.statusText}`, err?.param, err && typeof err === "object" ? err : {});
  }
  return data as T;
}

/** Builds a query string from the defined, non-empty values. */
export function qs(params: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}
