/**
 * Decodes a `component "<name>" { ... }` block written in HCL with a component's spec and decode,
 * the way the framework does (spec validation with nested blocks, then the component's decode),
 * returning the typed config and the diagnostics as `line:col severity: summary`.
 */
import { decodeBody } from '../../../src/config/decode.js';
import { DiagnosticSink } from '../../../src/config/diagnostics.js';
import { parseHcl } from '../../../src/config/parse.js';
import type { Diagnostic } from '../../../src/config/types.js';
import type { ComponentDefinition } from '../../../src/components/types.js';

/** Result of {@link decodeComponent}. */
export interface Decoded<C> {
  config: C;
  diagnostics: Diagnostic[];
  /** `line:col severity: summary` per diagnostic. */
  where: string[];
}

export async function decodeComponent<C>(
  def: ComponentDefinition<C>,
  hcl: string,
): Promise<Decoded<C>> {
  const file = '/cfg/components.lokocfg';
  const parsed = await parseHcl(hcl, file);
  if (parsed.diagnostics.length > 0) {
    throw new Error(`HCL did not parse: ${parsed.diagnostics.map((d) => d.summary).join('; ')}`);
  }
  const block = parsed.body.blocks.find((b) => b.type === 'component');
  if (!block) throw new Error('no component block');
  const sink = new DiagnosticSink();
  const body = decodeBody(
    block.body,
    def.spec,
    `component "${def.name}"`,
    block.headerRange,
    { sink, functions: false, env: {} },
    { nested: true },
  );
  const config = def.decode(body, sink, block.headerRange);
  return {
    config,
    diagnostics: sink.items,
    where: sink.items.map(
      (d) =>
        `${d.range ? `${d.range.start.line}:${d.range.start.column} ` : ''}${d.severity}: ${d.summary}`,
    ),
  };
}
