import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AttemptInterceptor } from './faults/attempt';
import { LabFaults } from './faults/lab-faults';
import { LabFaultsController } from './faults/lab-faults.controller';
import { LostReplyInterceptor } from './faults/lost-reply.interceptor';
import { SlowReplyInterceptor } from './faults/slow-reply.interceptor';

/**
 * What the lab adds beside a service's own module: the armed fault plan
 * and its endpoint, and three global interceptors (the attempt each request
 * is, for the fault points; the lost and the slow replies). Global, so the fault points
 * the lab puts into the app's providers find `LabFaults`.
 */
@Global()
@Module({
  controllers: [LabFaultsController],
  providers: [
    LabFaults,
    { provide: APP_INTERCEPTOR, useClass: AttemptInterceptor },
    { provide: APP_INTERCEPTOR, useClass: LostReplyInterceptor },
    { provide: APP_INTERCEPTOR, useClass: SlowReplyInterceptor },
  ],
  exports: [LabFaults],
})
export class LabModule {}
