/**
 * The dashboard's built browser files as constants (see src/dashboard/assets-macro.ts). Imported lazily
 * by src/dashboard/routes.ts so an instance that never serves the dashboard never builds or holds them.
 */
import { dashboardFiles } from "./assets-macro.ts" with { type: "macro" };

/** Every built file: JavaScript and CSS, names content-hashed. */
export const files = dashboardFiles();
