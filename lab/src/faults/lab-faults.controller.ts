import { Body, Controller, ForbiddenException, Get, HttpCode, Patch, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LabFaults, type FaultPlan } from './lab-faults';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Arms the lab's faults: registered only by the lab's overlay, and answers loopback only. */
@Controller('lab/faults')
export class LabFaultsController {
  constructor(private readonly faults: LabFaults) {}

  @Put()
  @HttpCode(204)
  arm(@Req() request: FastifyRequest, @Body() plan: FaultPlan): void {
    this.assertLoopback(request);
    this.faults.arm(plan ?? {});
  }

  /** Add to what is armed: counted faults add up, so two arming parties never undo each other. */
  @Patch()
  @HttpCode(204)
  add(@Req() request: FastifyRequest, @Body() plan: FaultPlan): void {
    this.assertLoopback(request);
    this.faults.add(plan ?? {});
  }

  @Get()
  armed(@Req() request: FastifyRequest): FaultPlan {
    this.assertLoopback(request);
    return this.faults.armed();
  }

  private assertLoopback(request: FastifyRequest): void {
    if (!LOOPBACK.test(request.socket.remoteAddress ?? '')) {
      throw new ForbiddenException('Lab faults answer loopback callers only');
    }
  }
}
