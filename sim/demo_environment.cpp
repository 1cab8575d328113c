#include "sim/demo_environment.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <pwd.h>
#include <unistd.h>

namespace callscope {
namespace {

// A signal only records itself; the main thread sees it, closes the dashboard
// and the destructors stop PostgreSQL and remove the directory.
// The second signal is not caught: a demo stuck on its way out still ends.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
extern "C" void onDemoSignal(int sig) {
    g_signal = sig;
    std::signal(sig, SIG_DFL);
}

// The socket lives in the private directory: the port only names the file.
constexpr int kPort = 5432;

std::string pgBin() {
    std::string best;
    std::error_code ec;
    for (const auto& d : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
        const std::string bin = d.path().string() + "/bin";
        if (std::filesystem::exists(bin + "/initdb") && bin > best)
            best = bin;
    }
    if (best.empty())
        throw std::runtime_error("PostgreSQL server binaries not found under /usr/lib/postgresql "
                                 "(the demo starts a throwaway cluster: apt install postgresql)");
    return best;
}

int run(const std::string& command) {
    return std::system(command.c_str());
}

} // namespace

struct DemoEnvironment::Impl {
    std::string dir, bin, asPg;
    int port = 0;
    rd_kafka_t* host = nullptr; // owns the mock cluster
    rd_kafka_mock_cluster_t* cluster = nullptr;
    std::string brokers;

    ~Impl() {
        if (cluster)
            rd_kafka_mock_cluster_destroy(cluster);
        if (host)
            rd_kafka_destroy(host);
        if (!dir.empty()) {
            run(asPg + bin + "/pg_ctl -D " + dir + "/data -m immediate -w stop >/dev/null 2>&1");
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    }
};

DemoEnvironment::DemoEnvironment() : m(std::make_unique<Impl>()) {
    m->bin = pgBin();
    // mkdtemp makes the directory 0700: only its owner reaches the socket.
    char tmpl[] = "/tmp/callscope-demo-XXXXXX";
    if (!::mkdtemp(tmpl))
        throw std::runtime_error("cannot make a temporary directory");
    m->dir = tmpl;
    if (::geteuid() == 0) { // initdb refuses root: the cluster belongs to postgres
        if (!::getpwnam("postgres"))
            throw std::runtime_error("running as root, but there is no postgres user to run "
                                     "PostgreSQL as (scripts/setup installs postgresql-15)");
        run("chown postgres: " + m->dir);
        m->asPg = "runuser -u postgres -- ";
    }
    // No TCP at all: the server listens only on a Unix socket inside the
    // private directory, so trust there means "whoever owns the directory".
    if (run(m->asPg + m->bin + "/initdb -D " + m->dir + "/data -U postgres --auth-local=trust " +
            "--auth-host=reject -E UTF8 --locale=C.UTF-8 >" + m->dir + "/initdb.log 2>&1") != 0)
        throw std::runtime_error("initdb failed; see " + m->dir + "/initdb.log");
    m->port = kPort;
    if (run(m->asPg + m->bin + "/pg_ctl -D " + m->dir + "/data -l " + m->dir +
            "/server.log -w -t 60 -o \"-p " + std::to_string(m->port) + " -k " + m->dir +
            " -c listen_addresses='' -c fsync=off -c synchronous_commit=off\" start >/dev/null") !=
        0)
        throw std::runtime_error("PostgreSQL did not start; see " + m->dir + "/server.log");

    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, nullptr);
    m->host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!m->host)
        throw std::runtime_error(std::string("mock Kafka: ") + err);
    m->cluster = rd_kafka_mock_cluster_new(m->host, 1);
    if (!m->cluster)
        throw std::runtime_error("mock Kafka: the cluster did not start");
    m->brokers = rd_kafka_mock_cluster_bootstraps(m->cluster);
    for (const char* topic : {kReceiptTopic, kCallerTopic})
        rd_kafka_mock_topic_create(m->cluster, topic, 4, 1);
}

DemoEnvironment::~DemoEnvironment() = default;

Config DemoEnvironment::config() const {
    Config c;
    c.postgres.dsn = "host=" + m->dir + " port=" + std::to_string(m->port) +
                     " dbname=" + kDatabase + " user=postgres";
    c.postgres.pollInterval = Millis{500};
    c.kafka.brokers = m->brokers;
    c.kafka.callerTopics = kCallerTopic;
    // The demo's faults should show within a minute, not after production thresholds.
    c.detect.stuckAfter = Millis{20'000};
    c.detect.receiptGrace = Millis{5'000};
    c.detect.callerAlertAfter = Millis{20'000};
    // The simulated server's business table: effect_missing is on.
    c.probe.sql = "SELECT 1 FROM callscope_sim_orders WHERE order_no = $1";
    c.probe.delay = Millis{5'000};
    return c;
}

void recordDemoSignals() {
    std::signal(SIGINT, onDemoSignal);
    std::signal(SIGTERM, onDemoSignal);
}

bool demoSignalled() {
    return g_signal != 0;
}

} // namespace callscope
