/** `loko component`: list, render, apply and delete cluster components. */
import { Command } from 'commander';
import type { RunAction } from '../shared/context.js';
import { componentApplyCommand } from './apply.js';
import { componentDeleteCommand } from './delete.js';
import { componentListCommand } from './list.js';
import { componentRenderCommand } from './render.js';

/** The `component` command group. */
export function componentCommand(runAction: RunAction): Command {
  const group = new Command('component').description(
    'cluster components (cloud controller manager, CNI, MetalLB): list, render, apply, delete',
  );
  group.addCommand(componentListCommand(runAction));
  group.addCommand(componentRenderCommand(runAction));
  group.addCommand(componentApplyCommand(runAction));
  group.addCommand(componentDeleteCommand(runAction));
  return group;
}
