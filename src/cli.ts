/** Placeholder until the commander tree lands. */
export async function main(_argv: string[]): Promise<number> {
  return 0;
}
