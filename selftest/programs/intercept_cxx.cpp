// C++ allocation: containers, strings, smart pointers, every form of
// operator new and delete (plain, array, nothrow, aligned, sized).  Each
// operator new calls malloc inside libstdc++: only the operator counts.
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

struct alignas(64) Line {
    char bytes[64];
};

struct Node {
    int value;
    Node *next;
};

static Node *kept_node;
static int *kept_array;
static Line *kept_line;

int main()
{
    std::vector<int> v;
    for (int i = 0; i < 1000; i++)
        v.push_back(i);                    // grows by doubling: many new/delete
    std::string s(100, 'x');
    s += std::string(200, 'y');
    std::map<int, std::string> m;
    for (int i = 0; i < 50; i++)
        m[i] = std::string(40 + i, 'm');
    std::unordered_map<std::string, int> um;
    for (int i = 0; i < 40; i++)
        um["key number " + std::to_string(i * 1000)] = i;
    auto sp = std::make_shared<std::vector<double>>(300);
    std::shared_ptr<Node> sn(new Node{1, nullptr});

    Node *n = new Node{2, nullptr};
    delete n;
    // The same call sites, the same stack and (reused) the same block each
    // time: every delete is a release of its own.
    for (int i = 0; i < 5; i++) {
        Node *loop = new Node{i, nullptr};
        delete loop;
    }
    kept_node = new Node{3, nullptr};
    int *arr = new int[77];
    delete[] arr;
    kept_array = new int[33];
    Node *nt = new (std::nothrow) Node{4, nullptr};
    delete nt;
    int *nta = new (std::nothrow) int[12];
    delete[] nta;
    Line *l = new Line;                    // operator new(size_t, align_val_t)
    delete l;                              // sized aligned delete
    Line *la = new Line[5];
    delete[] la;
    kept_line = new Line[2];
    void *raw = ::operator new(200, std::align_val_t(128));
    ::operator delete(raw, std::align_val_t(128));
    void *raws = ::operator new(48);
    ::operator delete(raws, 48);           // sized delete
    void *rawn = ::operator new(24, std::align_val_t(32), std::nothrow);
    ::operator delete(rawn, std::align_val_t(32), std::nothrow);
    std::printf("intercept_cxx: %zu %zu %zu %zu %zu\n", v.size(), s.size(), m.size(), um.size(),
                sp->size());
    return 0;
}
