// The API clients of the page: the schema's own services over gRPC-Web, generated from proto/.
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { TableService } from "./gen/bete/v1/table_service_pb";
import { muxFetch } from "./mux";

/** The server: the page's own origin, or `?api=http://host:port` (e.g. under `vite dev`). */
export function apiBase(): string {
  const given = new URLSearchParams(location.search).get("api");
  return given ?? location.origin;
}

/** Over plain HTTP every call of this tab goes on one WebSocket (mux.ts): the browser's six
 * HTTP/1.1 connections would otherwise be held by six tabs' streams. Over HTTPS, HTTP/2. */
const base = apiBase();
export const transport = createGrpcWebTransport({
  baseUrl: base,
  useBinaryFormat: true,
  fetch: base.startsWith("http:") ? muxFetch(base) : undefined,
});

export const tables: Client<typeof TableService> = createClient(TableService, transport);
// The replay and ladder clients are made in their pages' own modules (loaded when first
// visited), so the first load carries only the table schema.
