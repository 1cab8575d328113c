#pragma once
// Before the simulator writes: the database and the topics it may write into
// (refused unless named and made by the simulator itself), the tables created
// when missing. Internal to sim/.
#include <string>
#include <vector>

namespace callscope::sim {

// The simulator never writes into a database it was not pointed at by name,
// nor into tables it did not create: a production config passed by mistake
// is refused before the first write.
bool prepareDatabase(const std::string& dsn, const std::string& allowWritesTo, std::string& error,
                     bool& refused);

// Topics the simulator may write: the ones it has just created (recorded as
// its own) and the ones it created before; any other existing topic is refused.
bool claimTopics(const std::string& dsn, const std::vector<std::string>& created,
                 const std::vector<std::string>& existed, std::string& error, bool& refused);

} // namespace callscope::sim

namespace callscope {
struct Config;
struct SimOptions;
struct SimResult;
} // namespace callscope

namespace callscope::sim {

// Both of the above for a run: the database, then the receipt topic and the
// caller topic (when there is one) created or claimed. false with
// result.error (and result.refused when it was not allowed).
bool prepareTargets(const Config& config, const SimOptions& opt, const std::string& callerTopic,
                    SimResult& result);

} // namespace callscope::sim
