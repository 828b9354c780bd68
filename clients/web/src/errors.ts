// A failed call as a sentence for the page: the server's message and its ErrorInfo reason.
import { ConnectError, Code } from "@connectrpc/connect";

export function errorText(e: unknown): string {
  if (e instanceof ConnectError) {
    if (e.code === Code.Unavailable || e.code === Code.Unknown && /fetch|network/i.test(e.rawMessage)) {
      return "the server cannot be reached";
    }
    return e.rawMessage || Code[e.code];
  }
  return e instanceof Error ? e.message : String(e);
}
