// A C++ plugin for intercept_dlopen: loading it brings libstdc++ into a C
// program that had none, so operator new/delete appear only then.
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {
struct Item {
    int id;
    std::string name;
};
Item *leaked;

__attribute__((noinline)) Item *cxxlib_make_item(int round)
{
    return new Item{round, std::string(50 + round, 'i')};
}
}

extern "C" __attribute__((visibility("default"))) void *plugin_work(int round);
extern "C" void *plugin_work(int round)
{
    std::vector<int> v;
    for (int i = 0; i < 200; i++)
        v.push_back(i * round);
    std::map<int, std::string> m;
    for (int i = 0; i < 20; i++)
        m[i] = std::string(30 + i, 'm');
    delete cxxlib_make_item(round);
    leaked = new Item{-1, "kept"};         // operator new's own stack in the report
    auto sp = std::make_shared<std::vector<char>>(100);
    int *arr = new int[10 + round];
    delete[] arr;
    // The caller keeps a malloc'ed block, so it can free() it.
    char *keep = static_cast<char *>(std::malloc(64));
    keep[0] = static_cast<char>(sp->size() + v.size() + m.size());
    return keep;
}
