// Secrets never leave the process (SPEC §8): DSNs are rebuilt by libpq's parser
// without their secret fields, whatever form they were written in.
#include "connectors/config.h"
#include "connectors/secrets.h"

#include <gtest/gtest.h>

using namespace callscope;

namespace {

// Every form a DSN can carry a secret in, with the secret it carries.
struct DsnForm {
    const char* dsn;
    const char* secret;
};
const DsnForm kForms[] = {
    {"host=db password=s3cretA user=ro", "s3cretA"},
    {"host=db password = 's3cret B\\'q' user=ro", "s3cret B'q"},
    {"password=s3cretC", "s3cretC"},
    {"host=db sslpassword=s3cretD sslmode=require", "s3cretD"},
    {"host=db sslkey=/home/ro/.s3cretE/key.pem", "s3cretE"},
    {"postgresql://ro:s3cretF@db:5432/orders", "s3cretF"},
    {"postgres://ro:s3cret%40G@db/orders", "s3cret@G"},
    {"postgresql://ro@db:1/orders?password=s3cretH", "s3cretH"},
    {"postgresql://ro@db/orders?sslmode=require&sslpassword=s3cretI", "s3cretI"},
    {"postgresql://ro@db/orders?password=s3cret%20J&application_name=x", "s3cret J"},
};

} // namespace

TEST(Secrets, EveryDsnFormIsShownWithoutItsSecret) {
    for (const DsnForm& f : kForms) {
        SCOPED_TRACE(f.dsn);
        const std::string shown = redactDsn(f.dsn);
        EXPECT_EQ(shown.find(f.secret), std::string::npos) << shown;
        EXPECT_EQ(shown.find("password"), std::string::npos) << shown;
        EXPECT_EQ(shown.find("sslkey"), std::string::npos) << shown;
        EXPECT_FALSE(dsnProblem(f.dsn)) << *dsnProblem(f.dsn);
    }
}

TEST(Secrets, TheRestOfTheDsnIsKeptInKeywordForm) {
    EXPECT_EQ(redactDsn("host=db password=s3cret user=ro"), "user=ro host=db");
    EXPECT_EQ(redactDsn("postgresql://ro:s3cret@db:5432/orders?sslmode=verify-full"),
              "user=ro dbname=orders host=db port=5432 sslmode=verify-full");
    EXPECT_EQ(redactDsn("host=db application_name='a b'"), "host=db application_name='a b'");
    EXPECT_EQ(redactDsn(""), "");
}

TEST(Secrets, ADsnLibpqCannotParseIsNeverShownAndItsProblemHidesFragments) {
    // A space in an unquoted password: libpq quotes the piece after it.
    const std::string dsn = "host=db password=se cretK user=ro";
    EXPECT_EQ(redactDsn(dsn), "(a DSN libpq cannot parse)");
    const auto problem = dsnProblem(dsn);
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->find("cretK"), std::string::npos) << *problem;
    EXPECT_NE(problem->find("missing \"=\""), std::string::npos) << *problem;
    ASSERT_TRUE(dsnProblem("postgresql://ro@db/x?s3cretL=1"));
    EXPECT_EQ(dsnProblem("postgresql://ro@db/x?s3cretL=1")->find("s3cretL"), std::string::npos);
    ASSERT_TRUE(dsnProblem("host=db s3cretM=1"));
    EXPECT_EQ(dsnProblem("host=db s3cretM=1")->find("s3cretM"), std::string::npos);
}

TEST(Secrets, AQuoteInsideAPasswordDoesNotShiftWhatIsHidden) {
    for (const char* dsn : {"host=db password=ab cd\"ef", "host=db password=a\"b c\"d\"e",
                            "postgresql://u:se\"cr\"et@[::1"}) {
        const auto problem = dsnProblem(dsn);
        ASSERT_TRUE(problem) << dsn;
        for (const char* piece : {"cd", "ef", "b c", "cr", "et"})
            EXPECT_EQ(problem->find(piece), std::string::npos) << *problem;
    }
}

TEST(Secrets, OtherDsnFormsKeepWhatIsNotSecret) {
    EXPECT_EQ(redactDsn("host=a,b port=1,2 password=x"), "host=a,b port=1,2");
    EXPECT_EQ(redactDsn("postgresql://ro:pw@[::1]:5433/db"),
              "user=ro dbname=db host=::1 port=5433");
    EXPECT_EQ(redactDsn("service=orders password="), "service=orders");
}

TEST(Secrets, AConfigWithAnUnparsableDsnIsRefusedNamingTheKeyNotTheSecret) {
    const ConfigResult r =
        parseConfigText("[postgres]\ndsn = \"host=db password=se cretN\"\n", "t.toml");
    ASSERT_EQ(r.errors.size(), 1u);
    const std::string e = r.errors.front().toString();
    EXPECT_NE(e.find("t.toml:2: postgres.dsn: libpq cannot parse it"), std::string::npos) << e;
    EXPECT_EQ(e.find("cretN"), std::string::npos) << e;
}

TEST(Secrets, BadTomlOnASecretLineDoesNotQuoteTheValue) {
    for (const char* text : {"[postgres]\ndsn = \"host=db password=s3cretO\\q\"\n",
                             "[kafka.properties]\n\"sasl.password\" = \"s3cretP\\q\"\n",
                             "[kafka.properties]\n\"sasl.password\" = s3cretQ\n",
                             "[kafka]\nproperties = { \"sasl.password\" = s3cretQ }\n"}) {
        const ConfigResult r = parseConfigText(text, "t.toml");
        ASSERT_FALSE(r.ok()) << text;
        const std::string e = r.errors.front().toString();
        for (const char* secret : {"s3cretO", "s3cretP", "s3cretQ", "\\q"})
            EXPECT_EQ(e.find(secret), std::string::npos) << e;
        EXPECT_NE(e.find("t.toml:2"), std::string::npos) << e;
    }
}

TEST(Secrets, KafkaPropertiesHoldingSecretsAreKnownByName) {
    for (const char* name :
         {"sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.key.pem",
          "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config", "SASL.PASSWORD",
          "sasl.oauthbearer.token.endpoint.url"})
        EXPECT_TRUE(isSecretProperty(name)) << name;
    for (const char* name :
         {"security.protocol", "sasl.mechanisms", "sasl.username", "ssl.ca.location", "client.id"})
        EXPECT_FALSE(isSecretProperty(name)) << name;
}

TEST(Secrets, ScrubbingReplacesEverySecretValue) {
    Config c;
    c.postgres.dsn = "postgresql://ro:pw1@db/x?sslpassword=pw2";
    c.kafka.properties = {{"sasl.password", "pw3"}, {"sasl.username", "alice"}};
    const auto secrets = secretValues(c);
    EXPECT_EQ(scrubSecrets("a pw1 b pw2pw2 c pw3 alice", secrets), "a *** b ****** c *** alice");
    // Longest first; pieces of structured values too.
    EXPECT_EQ(scrubSecrets("abcdef abc", {"abc", "abcdef"}), "*** ***");
    c.kafka.properties = {{"sasl.oauthbearer.config", "principal=p secret=Bearer7x"}};
    EXPECT_EQ(scrubSecrets("beginning at: secret=Bearer7x", secretValues(c)),
              "beginning at: secret=***");
}
