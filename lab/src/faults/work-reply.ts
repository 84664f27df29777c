import type { ExecutionContext } from '@nestjs/common';
import { LabFaultsController } from './lab-faults.controller';

/**
 * True when `context` is a request that does work (an HTTP write to the
 * app), whose reply the lab may drop or hold back: never a read (health,
 * metrics, the ledger) nor the lab's own endpoint.
 */
export function repliesToWork(context: ExecutionContext): boolean {
  if (context.getType() !== 'http' || context.getClass() === LabFaultsController) return false;
  return context.switchToHttp().getRequest<{ method: string }>().method !== 'GET';
}
