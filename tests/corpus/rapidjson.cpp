// RapidJSON (Debian's rapidjson-dev): a JSON text parsed into a Document
// (its pool allocator is in the headers) and its numbers summed into a
// std::vector.
#include "corpus.h"
#include <rapidjson/document.h>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   std::string text = "{\"rows\": [";
   for (int i = 0; i < 40; i++)
      text += (i ? ", " : "") + std::to_string(i * 1.5);
   text += "], \"name\": \"corpus\"}";
   std::vector<double> vals(40);
   corpus_array("text", text.data(), text.size() + 1);
   corpus_array("vals", vals.data(), sizeof(double) * vals.size());
   CORPUS_START;
   rapidjson::Document doc;
   doc.Parse(text.c_str());
   const rapidjson::Value &rows = doc["rows"];
   for (rapidjson::SizeType i = 0; i < rows.Size(); i++)
      vals[i] = rows[i].GetDouble();
   CORPUS_STOP;
   corpus_close();
   printf("%g %s\n", vals[39], doc["name"].GetString());
   return 0;
}
