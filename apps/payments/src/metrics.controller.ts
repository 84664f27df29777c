import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/** Prometheus text exposition of every metric the process registered. */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
