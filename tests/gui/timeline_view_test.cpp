// timeline_view_test: filled in by the issue-15 work.
#include <gtest/gtest.h>
