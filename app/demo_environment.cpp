#include "app/demo_environment.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace callscope {
namespace {

std::string g_cleanup; // the shell command that stops PostgreSQL and removes the dir

extern "C" void onDemoSignal(int sig) {
    if (!g_cleanup.empty())
        (void)!std::system(g_cleanup.c_str());
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::runtime_error("no free port on 127.0.0.1");
    const int port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

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

int run(const std::string& command) { return std::system(command.c_str()); }

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
        g_cleanup.clear();
    }
};

DemoEnvironment::DemoEnvironment() : m(std::make_unique<Impl>()) {
    m->bin = pgBin();
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
    g_cleanup = m->asPg + m->bin + "/pg_ctl -D " + m->dir + "/data -m immediate -w stop >/dev/null 2>&1; rm -rf " + m->dir;
    if (run(m->asPg + m->bin + "/initdb -D " + m->dir + "/data -U postgres --auth=trust -E UTF8 " +
            "--locale=C.UTF-8 >" + m->dir + "/initdb.log 2>&1") != 0)
        throw std::runtime_error("initdb failed; see " + m->dir + "/initdb.log");
    m->port = freePort();
    if (run(m->asPg + m->bin + "/pg_ctl -D " + m->dir + "/data -l " + m->dir + "/server.log -w -t 60 " +
            "-o \"-p " + std::to_string(m->port) + " -k " + m->dir +
            " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off\" start >/dev/null") != 0)
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
    c.postgres.dsn = "host=127.0.0.1 port=" + std::to_string(m->port) + " dbname=postgres user=postgres";
    c.postgres.pollInterval = Millis{500};
    c.kafka.brokers = m->brokers;
    c.kafka.callerTopics = kCallerTopic;
    // The demo's faults should show within a minute, not after production thresholds.
    c.detect.stuckAfter = Millis{20'000};
    c.detect.receiptGrace = Millis{5'000};
    c.detect.callerAlertAfter = Millis{20'000};
    return c;
}

void removeDemoOnSignal() {
    std::signal(SIGINT, onDemoSignal);
    std::signal(SIGTERM, onDemoSignal);
}

} // namespace callscope
