#include "stats.hpp"

namespace loadgen {

void worker_result::merge(const worker_result& o) {
  established += o.established;
  open_at_end += o.open_at_end;
  sent += o.sent;
  received += o.received;
  sent_window += o.sent_window;
  received_window += o.received_window;
  mismatched_length += o.mismatched_length;
  mismatched_opcode += o.mismatched_opcode;
  mismatched_payload += o.mismatched_payload;
  wire_in_window += o.wire_in_window;
  wire_out_window += o.wire_out_window;
  compressed_in += o.compressed_in;
  compressed_out += o.compressed_out;
  unexpected_echoes += o.unexpected_echoes;
  unanswered += o.unanswered;
  unanswered_closed += o.unanswered_closed;
  backlog_at_end += o.backlog_at_end;
  close_codes_1009 += o.close_codes_1009;
  close_codes_1008 += o.close_codes_1008;
  close_codes_other += o.close_codes_other;
  errors.merge(o.errors);
  if (first_error.empty()) first_error = o.first_error;
  latency.merge(o.latency);
  send_lag.merge(o.send_lag);
}

}  // namespace loadgen
