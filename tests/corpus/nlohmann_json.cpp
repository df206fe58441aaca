// nlohmann's JSON for Modern C++ (Debian's nlohmann-json3-dev): a JSON
// text parsed into a json DOM (objects as std::map, arrays as
// std::vector, both allocated by the parser), then walked: an array's
// numbers summed into a std::vector and an object's members read.
#include "corpus.h"
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using nlohmann::json;

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::string text = "{\"name\": \"corpus\", \"rows\": [";
   for (int i = 0; i < 60; i++) {
      if (i)
         text.append(", ");
      text.append(std::to_string(i * 3 % 17));
   }
   text.append("], \"points\": [");
   for (int i = 0; i < 20; i++) {
      if (i)
         text.append(", ");
      text.append("{\"x\": " + std::to_string(i) + ", \"y\": " + std::to_string(20 - i) + "}");
   }
   text.append("]}");
   std::vector<double> vals;
   vals.reserve(64);
   corpus_array("text", text.data(), text.size() + 1);
   corpus_array("vals", vals.data(), sizeof(double) * 64);
   CORPUS_START;
   json doc = json::parse(text);
   for (const json &r : doc["rows"])
      vals.push_back(r.get<double>());
   long sx = 0;
   for (const json &p : doc["points"])
      sx += p["x"].get<long>() * p["y"].get<long>();
   CORPUS_STOP;
   json::array_t &rows = doc["rows"].get_ref<json::array_t &>();
   corpus_array("doc", rows.data(), sizeof(json) * rows.size());
   json::array_t &points = doc["points"].get_ref<json::array_t &>();
   corpus_array("doc", points.data(), sizeof(json) * points.size());
   corpus_close();
   printf("%g %ld %s\n", vals[59], sx, doc["name"].get<std::string>().c_str());
   return 0;
}
