/**
 * A line of the API's prose with its inline code marks rendered: `text` in backticks becomes <code>,
 * so no raw backtick ever reaches the page. Nothing else is interpreted (no HTML from the API).
 */
export function InlineText({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/);
  return (
    <>
      {parts.map((part, i) =>
        // Odd indices are the captured code spans.
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed string, never reordered
        i % 2 === 1 ? <code key={i}>{part}</code> : <span key={i}>{part}</span>,
      )}
    </>
  );
}
