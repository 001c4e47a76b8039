FROM python:3.12-slim
WORKDIR /app
# Runtime requirements only; the development tools (requirements-dev.lock) stay out of the image.
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
# Settings start no service on import, so collecting static files needs only a secret key.
RUN TRACE_SECRET_KEY=build python manage.py collectstatic --noinput
EXPOSE 8000
