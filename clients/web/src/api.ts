// The API clients of the page: the schema's own services over gRPC-Web, generated from proto/.
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { TableService } from "./gen/bete/v1/table_service_pb";
import { ReplayService } from "./gen/bete/v1/replay_service_pb";
import { LadderService } from "./gen/bete/v1/ladder_service_pb";

/** The server: the page's own origin, or `?api=http://host:port` (e.g. under `vite dev`). */
export function apiBase(): string {
  const given = new URLSearchParams(location.search).get("api");
  return given ?? location.origin;
}

const transport = createGrpcWebTransport({ baseUrl: apiBase(), useBinaryFormat: true });

export const tables: Client<typeof TableService> = createClient(TableService, transport);
export const replays: Client<typeof ReplayService> = createClient(ReplayService, transport);
export const ladders: Client<typeof LadderService> = createClient(LadderService, transport);
