#pragma once
// The simulated callers' receipt consumer: reads the receipt topic and hands
// each receipt to the caller that owns its callId. Internal to sim/.
#include "sim/kafka_writer.h"
#include "sim/sim_context.h"

#include <atomic>
#include <memory>
#include <utility>

namespace callscope::sim {

class ReceiptListener {
public:
    ReceiptListener(SimContext& ctx, std::unique_ptr<KafkaPartitionReader> reader)
        : m_ctx(ctx), m_reader(std::move(reader)) {}

    void run(const std::atomic<bool>& stop);

private:
    SimContext& m_ctx;
    std::unique_ptr<KafkaPartitionReader> m_reader;
};

} // namespace callscope::sim
