import { type CanActivate, type ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import type { Customer } from './api-key.guard.js';

/**
 * A checkout pays from the caller's own account: one whose body names
 * another account is refused (403) before any record is claimed, so one
 * customer can neither charge another's account nor learn of its records.
 * Runs after `ApiKeyGuard`, which authenticated the caller; a body without an
 * account pays from the caller's.
 */
@Injectable()
export class AccountGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ user?: Customer; body?: { account?: unknown } }>();
    const account = request.body?.account;
    if (account !== undefined && account !== request.user?.id) {
      throw new ForbiddenException('A checkout pays from the account of its credentials: the body names another account');
    }
    return true;
  }
}
