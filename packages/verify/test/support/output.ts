/** Collects what the CLI or a reporter writes, for a test to read back. */
export function captureOutput() {
  const chunks: string[] = [];
  return { write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}
