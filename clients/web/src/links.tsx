// Links between the pages: a bot's name to its page, a table to its live page or replay.

/** A house bot has no page of its own: its name is shown as it is. */
export function BotLink({ id, name }: { id: string; name: string }) {
  if (!id || name.startsWith("house:")) return <span title={name}>{name}</span>;
  return <a href={`#/bot/${encodeURIComponent(id)}`} title={name}>{name}</a>;
}
