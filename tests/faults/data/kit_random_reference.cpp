// Reference draws of std::mt19937 and the GNU C++ library's distributions, for
// tests/faults/test_stdrandom_reference.py. Written for fleetsim (not taken from the LoRR kit).
// Build and run: g++ -O2 -std=c++17 kit_random_reference.cpp -o ref && ./ref > kit_random_reference.json
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

static void list_begin(const char* name) { std::printf("\"%s\": [", name); }
static void list_end(bool last) { std::printf("]%s\n", last ? "" : ","); }

int main() {
    std::printf("{\n");
    {   // the 10000th word of a default-constructed engine, and the first words of seed 7
        std::mt19937 g;
        unsigned long w = 0;
        for (int i = 0; i < 10000; ++i) w = g();
        std::printf("\"default_10000th\": %lu,\n", w);
        std::mt19937 h(7);
        list_begin("words_seed7");
        for (int i = 0; i < 1300; ++i) std::printf("%s%lu", i ? "," : "", (unsigned long)h());
        list_end(false);
    }
    {
        std::mt19937 g(11);
        list_begin("canonical_seed11");
        for (int i = 0; i < 200; ++i)
            std::printf("%s%.17g", i ? "," : "", std::generate_canonical<double, 53>(g));
        list_end(false);
    }
    {
        std::mt19937 g(12);
        list_begin("bernoulli_seed12_p0.3");
        for (int i = 0; i < 300; ++i) {
            std::bernoulli_distribution d(0.3);
            std::printf("%s%d", i ? "," : "", d(g) ? 1 : 0);
        }
        list_end(false);
    }
    {
        std::mt19937 g(13);
        const int ranges[][2] = {{0, 1}, {10, 30}, {0, 6}, {-5, 5}, {0, 99999}, {0, 2147483646}};
        list_begin("uniform_seed13");
        bool first = true;
        for (auto& r : ranges)
            for (int i = 0; i < 50; ++i) {
                std::uniform_int_distribution<int> d(r[0], r[1]);
                std::printf("%s[%d,%d,%d]", first ? "" : ",", r[0], r[1], d(g));
                first = false;
            }
        list_end(false);
    }
    {
        std::mt19937 g(14);
        list_begin("normal_seed14_mean20_sd4.4");
        for (int i = 0; i < 200; ++i) {
            std::normal_distribution<double> d(20.0, 4.4);
            std::printf("%s%.17g", i ? "," : "", d(g));
        }
        list_end(false);
    }
    {
        std::mt19937 g(15);
        const double means[] = {0.4, 1.5, 4.0, 11.9};
        list_begin("poisson_seed15");
        bool first = true;
        for (double m : means)
            for (int i = 0; i < 60; ++i) {
                std::poisson_distribution<int> d(m);
                std::printf("%s[%.17g,%d]", first ? "" : ",", m, d(g));
                first = false;
            }
        list_end(false);
    }
    {
        std::mt19937 g(16);
        const int sizes[] = {1, 2, 3, 4, 5, 17, 40, 151, 400, 70000};
        list_begin("shuffle_seed16");
        bool first = true;
        for (int n : sizes) {
            std::vector<int> v(n);
            std::iota(v.begin(), v.end(), 0);
            std::shuffle(v.begin(), v.end(), g);
            std::printf("%s[", first ? "" : ",");
            first = false;
            int shown = std::min(n, 400);  // (the first 400 of the largest, and its sum)
            for (int i = 0; i < shown; ++i) std::printf("%s%d", i ? "," : "", v[i]);
            std::printf("]");
        }
        list_end(false);
    }
    {   // Poisson means of 12 and more (the library's rejection method), a fresh distribution a draw
        std::mt19937 g(17);
        const double means[] = {12.0, 12.5, 17.3, 20.0, 64.0, 100.0, 333.3, 2500.0, 10000.0};
        list_begin("poisson_large_seed17");
        bool first = true;
        for (double m : means)
            for (int i = 0; i < 80; ++i) {
                std::poisson_distribution<int> d(m);
                std::printf("%s[%.17g,%d]", first ? "" : ",", m, d(g));
                first = false;
            }
        list_end(false);
        std::printf("\"poisson_large_next_word\": %lu,\n", (unsigned long)g());
    }
    {
        const double xs[] = {0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 2.4999999999999996,
                             -1.5000000000000002, 7.0, 1e15 + 0.5};
        list_begin("lround");
        bool first = true;
        for (double x : xs) {
            std::printf("%s[%.17g,%ld]", first ? "" : ",", x, std::lround(x));
            first = false;
        }
        list_end(true);
    }
    std::printf("}\n");
    return 0;
}
