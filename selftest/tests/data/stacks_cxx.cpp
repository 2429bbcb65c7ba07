// C++ allocations: operator new, new[], containers and strings, kept.
#include <map>
#include <memory>
#include <string>
#include <vector>

// Never destroyed, so that every block below is still in use at exit.
static std::vector<void *> &keep = *new std::vector<void *>();

template <typename T> __attribute__((noinline)) T *make_one(int v) { return new T(v); }

__attribute__((noinline)) void fill(std::map<int, std::string> &m)
{
    for (int i = 0; i < 3; i++)
        m[i] = std::string(40 + i, 'x');
}

int main()
{
    keep.reserve(16);
    keep.push_back(make_one<int>(1));
    keep.push_back(make_one<long>(2));
    keep.push_back(new char[300]);
    auto *m = new std::map<int, std::string>();
    fill(*m);
    keep.push_back(m);
    return 0;
}
